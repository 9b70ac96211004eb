/**
 * Where an order's courier is, without a map (docs/portal.md, "The order page"): the latest position with
 * its accuracy and age, the ETA, and the trail drawn as a line in a box scaled to its own extent (north
 * up), with the newest points listed. Nothing is fetched from outside, so it works under the portal's
 * Content-Security-Policy and offline. "Nothing yet" is said per part.
 */
import type { OrderTracking } from '@partner-logistics/sdk/types';
import { formatDateTime, formatNumber } from '../format';

const BOX = 240;
const PAD = 12;

/** The trail's points in the box: x east, y south (SVG's y grows downwards), the longer side fills it. */
function projected(trail: OrderTracking['trail']): Array<{ x: number; y: number }> {
  const lats = trail.map((p) => p.lat);
  const lngs = trail.map((p) => p.lng);
  const [minLat, maxLat, minLng, maxLng] = [Math.min(...lats), Math.max(...lats), Math.min(...lngs), Math.max(...lngs)];
  // A degree of longitude is shorter than one of latitude away from the equator.
  const lngScale = Math.cos((((minLat + maxLat) / 2) * Math.PI) / 180);
  const span = Math.max(maxLat - minLat || 0, (maxLng - minLng) * lngScale || 0, 1e-6);
  const inner = BOX - 2 * PAD;
  return trail.map((p) => ({
    x: PAD + (((p.lng - minLng) * lngScale) / span) * inner,
    y: PAD + ((maxLat - p.lat) / span) * inner,
  }));
}

function TrailSketch({ trail }: { trail: OrderTracking['trail'] }) {
  const points = projected(trail);
  const last = points[points.length - 1];
  return (
    <svg
      className="trail-sketch"
      viewBox={`0 0 ${BOX} ${BOX}`}
      width={BOX}
      height={BOX}
      role="img"
      aria-label={`The courier's trail: ${trail.length} points, north up, the newest marked`}
      data-testid="trail-sketch"
    >
      <rect x="0" y="0" width={BOX} height={BOX} className="trail-frame" />
      <polyline points={points.map((p) => `${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(' ')} className="trail-line" />
      {last && <circle cx={last.x} cy={last.y} r="6" className="trail-now" />}
    </svg>
  );
}

const coordinates = (lat: number, lng: number) => `${lat.toFixed(5)}, ${lng.toFixed(5)}`;

export function OrderTrackingView({ tracking }: { tracking: OrderTracking }) {
  const { location, etaAt, trail } = tracking;
  return (
    <section className="section" aria-labelledby="tracking-heading" data-testid="order-tracking">
      <h2 id="tracking-heading">Tracking</h2>
      {!location ? (
        <p className="empty-inline" data-testid="tracking-none">
          No courier location yet. Locations are sent with <code>POST /v1/partner/orders/{'{code}'}/locations</code> while the
          order is on its way.
        </p>
      ) : (
        <div className="tracking">
          <table className="table headers">
            <tbody>
              <tr>
                <th scope="row">Courier at</th>
                <td className="mono" data-testid="tracking-position">
                  {coordinates(location.lat, location.lng)}
                  {location.accuracyM !== null && ` (±${formatNumber(location.accuracyM)} m)`}
                </td>
              </tr>
              <tr>
                <th scope="row">Seen</th>
                <td data-testid="tracking-seen">{formatDateTime(location.at)}</td>
              </tr>
              <tr>
                <th scope="row">Expected</th>
                <td data-testid="tracking-eta">{etaAt ? formatDateTime(etaAt) : 'No ETA sent'}</td>
              </tr>
              <tr>
                <th scope="row">Trail</th>
                <td data-testid="tracking-trail-count">
                  {trail.length} {trail.length === 1 ? 'point' : 'points'} (the last 50 are kept)
                </td>
              </tr>
            </tbody>
          </table>
          {trail.length > 1 && <TrailSketch trail={trail} />}
        </div>
      )}
      {trail.length > 0 && (
        <details>
          <summary>The newest points</summary>
          <ol className="trail-points" data-testid="trail-points">
            {[...trail]
              .reverse()
              .slice(0, 10)
              .map((p) => (
                <li key={p.at}>
                  <span className="mono">{coordinates(p.lat, p.lng)}</span> <span className="hint">{formatDateTime(p.at)}</span>
                </li>
              ))}
          </ol>
        </details>
      )}
    </section>
  );
}
