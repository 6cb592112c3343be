import { Elysia } from 'elysia';
import type { Clock } from '../../clock.ts';
import { accessContext, requireEnterprise } from '../../http/plugins/limits.ts';
import { strictQuery } from '../../http/strict-query.ts';
import { eventFilter } from '../../stream/filter.ts';
import { PARAMETERS, parameterDocs } from '../parameters.ts';
import { errorResponses } from '../responses.ts';
import { parseListQuery, resolveCityOrThrow, type RawListParams } from '../events/service.ts';
import { StreamQuery } from './model.ts';
import { parseLastEventId, type StreamHub } from './service.ts';

const checkStream = strictQuery(StreamQuery);
const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' };

export function streamRoutes(deps: { hub: StreamHub; clock: Clock }) {
  return new Elysia({ name: 'trafik.stream' }).use(accessContext).get(
    '/api/v1/events/stream',
    ({ request, access, server }) => {
      const raw: RawListParams = checkStream(request.url);
      requireEnterprise(access, 'stream', 'The live event stream belongs to the Enterprise plan; poll the list endpoints with updated_since on Free.');
      const city = raw.city === undefined ? null : resolveCityOrThrow(raw.city, 'query');
      const { query: q } = parseListQuery(raw, { accept: null, now: deps.clock(), plate: city?.plate ?? null, enterprise: true, historyDays: 1 });
      const lastEventId = parseLastEventId(request.headers.get('last-event-id'));
      // HEAD gets the stream's headers and opens nothing: Elysia's own HEAD handling (in-process,
      // or a path Bun's routes miss, such as a trailing slash) reads the body to measure it, and
      // a stream never ends.
      if (request.method === 'HEAD') return new Response(null, { headers: SSE_HEADERS });
      const body = deps.hub.openStream(access.keyId ?? 'anonymous', eventFilter(q), lastEventId, request.signal);
      // A stream is idle between changes: no idle timeout (heartbeats keep proxies awake).
      server?.timeout(request, 0);
      return new Response(body, { headers: SSE_HEADERS });
    },
    {
      response: errorResponses(400, 403),
      detail: {
        tags: ['Events'],
        summary: 'Live stream of event changes (Server-Sent Events, Enterprise)',
        description: `One message per change: \`id\` = the change's sequence number, \`event\` = \`traffic_event.created|updated|cleared\`, \`data\` = the Event JSON. Takes the list filters (\`city\`, \`type\`, \`severity\`, \`bbox\`, \`near\`/\`radius_km\`). Reconnect with \`Last-Event-ID\` (EventSource does it for you) to replay what was missed from the outbox (up to 10,000 changes, within HISTORY_DAYS). A \`: ping\` comment every 15 s; no idle timeout. Opening a stream counts as one request; at most 5 concurrent streams per key (429 beyond). Free: 403 plan_required.`,
        operationId: 'streamEvents',
        [PARAMETERS]: parameterDocs({ query: StreamQuery }),
      },
    },
  );
}
