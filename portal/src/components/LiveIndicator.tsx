/** Whether a page follows the realtime channel right now, said in words beside a dot (`live`: what updates). */
import { useSyncExternalStore } from 'react';
import { getRealtimeStatus, onRealtimeStatus } from '../realtime';

export function LiveIndicator({ live = 'Live: rows update as attempts happen' }: { live?: string }) {
  const status = useSyncExternalStore(onRealtimeStatus, getRealtimeStatus);
  const text =
    status === 'live' ? live : status === 'connecting' ? 'Connecting to live updates…' : 'Live updates paused: reconnecting';
  return (
    <p className={`live live-${status}`} role="status" data-testid="live-status" data-state={status}>
      <span className="live-dot" aria-hidden="true" /> {text}
    </p>
  );
}
