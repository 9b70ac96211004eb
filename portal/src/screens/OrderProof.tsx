/**
 * The proof of delivery of one order (GET /v1/developer/orders/{code}/proof): the event it came with,
 * where the courier was (coordinates, accuracy, distance from the address), who took the order, and
 * photo thumbnails. Photos are fetched with the session's token (GET /v1/developer/uploads/{id}) and
 * shown as data: URLs, since an <img> cannot send the token itself. Rules: docs/tracking-and-proof.md.
 */
import { developer } from '../client';
import { OrderPayment } from '../components/OrderPayment';
import { usePageTitle } from '../components/PageTitle';
import { Badge, Empty, LoadError, Loading } from '../components/States';
import { formatDateTime, formatNumber } from '../format';
import { queryKeys, useApiQuery } from '../query';

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
  const failed = photo.error !== null;
  return (
    <figure className="card proof-photo" data-photo-id={id} style={{ margin: 0 }}>
      {src ? <img src={src} alt={`Delivery evidence ${id}`} width={160} height={160} style={{ objectFit: 'cover' }} /> : null}
      {!src && <p className="hint">{failed ? 'Photo unavailable' : 'Loading photo…'}</p>}
      <figcaption className="hint mono">
        {id} · {formatNumber(bytes)} bytes
      </figcaption>
    </figure>
  );
}

export function OrderProof({ code }: { code: string }) {
  usePageTitle(`Proof of ${code}`);
  const proof = useApiQuery(queryKeys.orderProof(code), () =>
    developer.GET('/v1/developer/orders/{code}/proof', { params: { path: { code } } }),
  );
  if (proof.error && !proof.data) {
    if (proof.error.status === 404) {
      return (
        <>
          <h1 tabIndex={-1}>No proof for {code}</h1>
          <Empty>
            <p>This order has no proof of delivery, or it is not an order of your keys.</p>
          </Empty>
          <OrderPayment code={code} />
        </>
      );
    }
    return <LoadError error={proof.error} onRetry={() => void proof.reload()} />;
  }
  const p = proof.data;
  if (!p) return <Loading label="Loading proof…" />;
  return (
    <>
      <h1 tabIndex={-1}>
        Proof of delivery: <code>{p.orderCode}</code>
      </h1>
      <p className="meta" data-testid="proof-event">
        <Badge tone={p.event === 'DELIVERED' ? 'ok' : 'warn'}>{p.event}</Badge> {formatDateTime(p.at)}
      </p>
      <table className="table headers">
        <tbody>
          <tr>
            <th scope="row">Location</th>
            <td className="mono" data-testid="proof-location">
              {p.location
                ? `${p.location.lat.toFixed(6)}, ${p.location.lng.toFixed(6)} (±${p.location.accuracyM} m)`
                : 'not sent'}
            </td>
          </tr>
          <tr>
            <th scope="row">Distance from the address</th>
            <td data-testid="proof-distance">{p.distanceM === null ? 'unknown' : `${formatNumber(p.distanceM)} m`}</td>
          </tr>
          <tr>
            <th scope="row">Recipient</th>
            <td data-testid="proof-recipient">{p.recipientName ?? 'not given'}</td>
          </tr>
        </tbody>
      </table>
      <h2>Photos</h2>
      {p.photos.length === 0 ? (
        <Empty>
          <p>No photos were sent.</p>
        </Empty>
      ) : (
        <div style={{ display: 'flex', flexWrap: 'wrap', gap: '1rem' }}>
          {p.photos.map((photo) => (
            <Thumbnail key={photo.id} id={photo.id} bytes={photo.bytes} />
          ))}
        </div>
      )}
      <OrderPayment code={code} />
    </>
  );
}
