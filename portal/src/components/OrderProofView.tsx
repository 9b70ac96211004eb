/**
 * An order's proof of delivery (docs/tracking-and-proof.md, "Proof reads"): the event it came with, where
 * the courier was (coordinates, accuracy, distance from the address), who took the order, and photo
 * thumbnails. Photos are fetched with the session's token (GET /v1/developer/uploads/{id}) and shown as
 * data: URLs, since an <img> cannot send the token itself. An order without proof says what brings one.
 */
import type { OrderProof } from '@partner-logistics/sdk/types';
import { developer } from '../client';
import { formatDateTime, formatNumber } from '../format';
import { queryKeys, useApiQuery } from '../query';
import { Badge } from './States';

/** A photo as a data: URL (the portal's content security policy allows data: images, not blob:). */
async function photoDataUrl(id: string): Promise<string> {
  const { data, error, response } = await developer.raw.GET('/v1/developer/uploads/{id}', {
    params: { path: { id } },
    parseAs: 'blob',
  });
  if (error !== undefined || !data) throw new Error(`HTTP ${response.status}`);
  return new Promise<string>((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(data);
  });
}

function Thumbnail({ id, bytes }: { id: string; bytes: number }) {
  const photo = useApiQuery(queryKeys.upload(id), () => photoDataUrl(id));
  const src = photo.data ?? null;
  return (
    <figure className="card proof-photo" data-photo-id={id}>
      {src ? <img src={src} alt={`Delivery evidence ${id}`} width={160} height={160} /> : null}
      {!src && <p className="hint">{photo.error ? 'Photo unavailable' : 'Loading photo…'}</p>}
      <figcaption className="hint mono">
        {id} · {formatNumber(bytes)} bytes
      </figcaption>
    </figure>
  );
}

export function OrderProofView({ proof, status }: { proof: OrderProof | null; status: string }) {
  return (
    <section className="section" aria-labelledby="proof-heading" data-testid="order-proof">
      <h2 id="proof-heading">Proof of delivery</h2>
      {!proof ? (
        <p className="empty-inline" data-testid="proof-none">
          {status === 'DELIVERED' || status === 'FAILED'
            ? `No proof was sent with the ${status} event.`
            : 'No proof yet: it comes with a DELIVERED or FAILED event that carries one.'}
        </p>
      ) : (
        <>
          <p className="meta" data-testid="proof-event">
            <Badge tone={proof.event === 'DELIVERED' ? 'ok' : 'warn'}>{proof.event}</Badge> {formatDateTime(proof.at)}
          </p>
          <table className="table headers">
            <tbody>
              <tr>
                <th scope="row">Location</th>
                <td className="mono" data-testid="proof-location">
                  {proof.location
                    ? `${proof.location.lat.toFixed(6)}, ${proof.location.lng.toFixed(6)} (±${proof.location.accuracyM} m)`
                    : 'not sent'}
                </td>
              </tr>
              <tr>
                <th scope="row">Distance from the address</th>
                <td data-testid="proof-distance">
                  {proof.distanceM === null ? 'unknown' : `${formatNumber(proof.distanceM)} m`}
                </td>
              </tr>
              <tr>
                <th scope="row">Recipient</th>
                <td data-testid="proof-recipient">{proof.recipientName ?? 'not given'}</td>
              </tr>
            </tbody>
          </table>
          <h3>Photos</h3>
          {proof.photos.length === 0 ? (
            <p className="empty-inline">No photos were sent.</p>
          ) : (
            <div className="proof-photos">
              {proof.photos.map((photo) => (
                <Thumbnail key={photo.id} id={photo.id} bytes={photo.bytes} />
              ))}
            </div>
          )}
        </>
      )}
    </section>
  );
}
