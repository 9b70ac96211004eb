/**
 * A secret the API shows exactly once (a new API key, a webhook signing secret): a read-only field that
 * wraps at phone width, a copy button, and a plain warning that it cannot be shown again. Its dialog is
 * closed only by the explicit "I have copied it" (`CopiedButton`): Escape and the backdrop do nothing
 * but say so (`secretBlockedNote`).
 */
import { useId, useState } from 'react';

interface SecretRevealProps {
  /** The field's label, e.g. "API key". */
  label: string;
  /** How the warning names it, e.g. "key" in "You will not see this key again". */
  noun: string;
  value: string;
  testId?: string;
}

export function SecretReveal({ label, noun, value, testId }: SecretRevealProps) {
  const id = useId();
  const [copied, setCopied] = useState<'idle' | 'copied' | 'failed'>('idle');

  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied('copied');
    } catch {
      // Clipboard API refused (permissions, insecure context): select the text so Ctrl+C works.
      const field = document.getElementById(id);
      if (field instanceof HTMLTextAreaElement) field.select();
      setCopied('failed');
    }
  };

  return (
    <div className="secret">
      <p className="notice notice-warning">
        <strong>Copy it now.</strong> You will not see this {noun} again.
      </p>
      <label htmlFor={id}>{label}</label>
      <div className="secret-row">
        <textarea
          id={id}
          className="mono secret-value"
          readOnly
          value={value}
          rows={1}
          data-testid={testId}
          data-autofocus
          spellCheck={false}
          onFocus={(e) => e.currentTarget.select()}
        />
        <button type="button" onClick={copy}>
          Copy<span className="visually-hidden"> {label}</span>
        </button>
      </div>
      <p className="hint" aria-live="polite">
        {copied === 'copied' && 'Copied to the clipboard.'}
        {copied === 'failed' && 'Could not copy automatically: the text is selected, press Ctrl+C (⌘C).'}
      </p>
    </div>
  );
}

/** What the dialog of a one-time secret says when Escape is pressed. */
export const secretBlockedNote = (noun: string) =>
  `This ${noun} cannot be shown again: copy it, then choose “I have copied it” to close.`;

/** The only way out of a one-time secret's dialog. */
export function CopiedButton({ onClick }: { onClick: () => void }) {
  return (
    <div className="dialog-actions">
      <button type="button" className="primary" onClick={onClick}>
        I have copied it
      </button>
    </div>
  );
}
