/**
 * The request log's live tail on the realtime channel (src/modules/realtime/rooms.ts): the recorder
 * offers an entry (`request.logged`) only for partners with a user connected (its live audience), and
 * `request.logged { request }` goes to that partner's users.
 */
import type { RealtimePublisher } from '../realtime/rooms.js';
import type { RequestLogged } from './request-log.types.js';
import type { RequestRecorder } from './request-recorder.js';

export function requestLogRealtime(recorder: Pick<RequestRecorder, 'setLiveAudience'>): RealtimePublisher {
  return {
    subscribe(events, rooms) {
      const noAudience = recorder.setLiveAudience((partnerId) => rooms.hasPartner(partnerId));
      const onLogged = (event: RequestLogged) => rooms.toPartner(event.partnerId, 'request.logged', { request: event.request });
      events.on('request.logged', onLogged);
      return () => {
        events.off('request.logged', onLogged);
        noAudience();
      };
    },
  };
}
