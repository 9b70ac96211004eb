/**
 * A question before an action that cannot be undone (revoke a key, delete a webhook, …): what will
 * happen, Cancel (focused first, so Enter does not confirm by accident) and the action's own button.
 * While the action runs, nothing closes the dialog; its error is shown inside it.
 */

import type { ReactNode } from 'react';
import { Dialog } from './Dialog';
import { ErrorNotice } from './ErrorNotice';

interface ConfirmDialogProps {
  open: boolean;
  title: string;
  /** What will happen, in plain words. */
  children: ReactNode;
  /** The action's button, e.g. "Delete webhook"; while busy, `busyLabel` ("Deleting…"). */
  confirmLabel: string;
  busyLabel: string;
  tone?: 'danger' | 'primary';
  busy: boolean;
  error: Error | null;
  onConfirm: () => void;
  onClose: () => void;
}

export function ConfirmDialog({
  open,
  title,
  children,
  confirmLabel,
  busyLabel,
  tone = 'danger',
  busy,
  error,
  onConfirm,
  onClose,
}: ConfirmDialogProps) {
  return (
    <Dialog open={open} title={title} onClose={onClose} dismissable={!busy}>
      {children}
      <ErrorNotice error={error} />
      <div className="dialog-actions">
        <button type="button" onClick={onClose} disabled={busy} data-autofocus>
          Cancel
        </button>
        <button type="button" className={tone} disabled={busy} onClick={onConfirm}>
          {busy ? busyLabel : confirmLabel}
        </button>
      </div>
    </Dialog>
  );
}
