/**
 * A modal dialog on the native <dialog> element: showModal() makes the rest of the page inert, traps
 * Tab inside and gives Escape for free. This component adds what the platform leaves to us: focus goes
 * to the element marked data-autofocus (else the first focusable one) on open, and back to whatever
 * opened the dialog on close.
 */
import { type ReactNode, useEffect, useId, useRef, useState } from 'react';

interface DialogProps {
  open: boolean;
  title: string;
  onClose: () => void;
  children: ReactNode;
  /** False while an action runs, so Escape cannot close over it. */
  dismissable?: boolean;
  /** Change it to move focus again (for instance when a form turns into its result). */
  focusKey?: string;
  /**
   * Said when Escape is pressed while the dialog may not be dismissed (a one-time secret: only its
   * explicit "I have copied it" closes the dialog). The native dialog never closes on a backdrop click.
   */
  blockedNote?: string;
}

const FOCUSABLE =
  'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

export function Dialog({ open, title, onClose, children, dismissable = true, focusKey, blockedNote }: DialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const [blocked, setBlocked] = useState(false);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new content (focusKey) or opening starts without the note
  useEffect(() => setBlocked(false), [open, focusKey]);
  const opener = useRef<Element | null>(null);
  const titleId = useId();

  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    if (open && !el.open) {
      opener.current = document.activeElement;
      el.showModal();
    } else if (!open && el.open) {
      el.close();
      const back = opener.current;
      if (back instanceof HTMLElement && back.isConnected) back.focus();
    }
  }, [open]);

  // biome-ignore lint/correctness/useExhaustiveDependencies: focusKey is the trigger, not a value read
  useEffect(() => {
    const el = ref.current;
    if (!open || !el) return;
    const target = el.querySelector<HTMLElement>('[data-autofocus]') ?? el.querySelector<HTMLElement>(FOCUSABLE);
    target?.focus();
    if ((target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement) && target.readOnly) target.select();
  }, [open, focusKey]);

  return (
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      className="dialog"
      onCancel={(event) => {
        event.preventDefault();
        if (dismissable) onClose();
        else if (blockedNote) setBlocked(true);
      }}
    >
      {open && (
        <div className="dialog-body">
          <h2 id={titleId}>{title}</h2>
          {blocked && blockedNote && (
            <p className="notice notice-warning" role="alert" data-testid="dialog-blocked">
              {blockedNote}
            </p>
          )}
          {children}
        </div>
      )}
    </dialog>
  );
}
