/**
 * "Decline offer": the reason (the API's enum) and a note, required for Other and at most 500
 * characters. The API checks both; what it says is shown beside the field it is about.
 */
import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';
import { developer } from '../client';
import { DECLINE_REASONS, type DeclineReason, type Offer } from '../offers';
import { Dialog } from './Dialog';
import { ErrorNotice, fieldMessages } from './ErrorNotice';

export function DeclineOfferDialog({
  offer,
  onClose,
  onDeclined,
}: {
  offer: Offer | null;
  onClose: () => void;
  onDeclined: (offer: Offer) => void;
}) {
  return (
    <Dialog open={offer !== null} title={`Decline the offer of ${offer?.orderCode ?? ''}?`} onClose={onClose}>
      {offer && <DeclineForm key={offer.id} offer={offer} onClose={onClose} onDeclined={onDeclined} />}
    </Dialog>
  );
}

function DeclineForm({ offer, onClose, onDeclined }: { offer: Offer; onClose: () => void; onDeclined: (offer: Offer) => void }) {
  const [reason, setReason] = useState<DeclineReason>('NO_CAPACITY');
  const [note, setNote] = useState('');
  const noteId = useId();
  const decline = useMutation({
    mutationFn: () =>
      developer.POST('/v1/developer/offers/{id}/decline', {
        params: { path: { id: offer.id } },
        body: { reason, ...(note.trim() ? { note: note.trim() } : {}) },
      }),
    onSuccess: (declined) => {
      onDeclined(declined);
      onClose();
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    decline.mutate();
  };
  // The API requires a note for OTHER (400 on `note`): said beside the note.
  const noteErrors = fieldMessages(decline.error, 'note').map((m) => `The note ${m}.`);
  const edited = () => decline.reset();
  return (
    <form onSubmit={submit} noValidate>
      <p>The order stays unassigned and the marketplace offers it elsewhere. Your reason is counted in your statistics.</p>
      <fieldset>
        <legend>Reason</legend>
        {DECLINE_REASONS.map(([value, label]) => (
          <label key={value} className="option">
            <input
              type="radio"
              name="reason"
              value={value}
              checked={reason === value}
              onChange={() => {
                setReason(value);
                edited();
              }}
            />
            {label}
          </label>
        ))}
      </fieldset>
      <label htmlFor={noteId}>Note {reason === 'OTHER' ? '(required)' : '(optional)'}</label>
      <textarea
        id={noteId}
        value={note}
        rows={3}
        className="offer-note-field"
        onChange={(e) => {
          setNote(e.target.value);
          edited();
        }}
        aria-invalid={noteErrors.length > 0 || undefined}
        aria-describedby={`${noteId}-hint`}
      />
      <p id={`${noteId}-hint`} className={noteErrors.length ? 'field-error' : 'hint'}>
        {noteErrors.length ? noteErrors.join(' ') : `${note.length} of 500 characters.`}
      </p>
      <ErrorNotice error={decline.error} inlineFields={['note']} />
      <div className="dialog-actions">
        <button type="button" onClick={onClose} disabled={decline.isPending}>
          Cancel
        </button>
        <button type="submit" className="danger" disabled={decline.isPending}>
          {decline.isPending ? 'Declining…' : 'Decline offer'}
        </button>
      </div>
    </form>
  );
}
