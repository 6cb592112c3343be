import { t } from 'elysia';
import { EVENT_TYPES, SEVERITIES, SOURCE_NAMES } from '../../domain/event.ts';
import { CityRef, Int, Timestamp } from '../shared-model.ts';

const typeList = `(${EVENT_TYPES.join('|')})`;
const severityList = `(${SEVERITIES.join('|')})`;
const num = '-?\\d{1,3}(\\.\\d{1,12})?';
export const RFC3339 = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?(Z|z|[+-]\\d{2}:\\d{2})$';
export const RFC3339_REASON = 'must be an RFC 3339 timestamp such as 2026-11-21T10:00:00Z';

const LineString = t.Object(
  {
    type: t.Literal('LineString'),
    coordinates: t.Array(t.Tuple([t.Number(), t.Number()]), { description: '[lon, lat] positions' }),
  },
  { description: 'GeoJSON LineString' },
);

export const Event = t.Object(
  {
    id: t.String({ description: 'Stable across scans: derived from source and source id', examples: ['evt_5k2j9xq4m7c1b8d0a3f6'] }),
    type: t.UnionEnum(EVENT_TYPES, { description: 'accident | jam | hazard | road_closure' }),
    subtype: t.Union([t.String(), t.Null()], { description: 'Normalized lower_snake subtype, null if none', examples: ['accident_major'] }),
    severity: t.UnionEnum(SEVERITIES),
    status: t.UnionEnum(['active', 'cleared']),
    city: CityRef,
    district: t.Union([t.String(), t.Null()], { examples: ['Şişli'] }),
    location: t.Object({ lat: t.Number({ examples: [41.06409] }), lon: t.Number({ examples: [29.01233] }) }, { description: "The event's point (a jam: its start)" }),
    geometry: t.Union([LineString, t.Null()], { description: 'Line of a jam or closure when known' }),
    road: t.Union([t.String(), t.Null()], { examples: ['Barbaros Bulvarı'] }),
    description: t.Union([t.String(), t.Null()], { description: 'Source text' }),
    jam: t.Union(
      [
        t.Object({
          speed_kmh: t.Union([t.Number(), t.Null()]),
          length_m: t.Union([t.Number(), t.Null()]),
          delay_s: t.Union([t.Number(), t.Null()]),
          level: t.Union([Int({ minimum: 0, maximum: 5 }), t.Null()]),
        }),
        t.Null(),
      ],
      { description: 'Jams only' },
    ),
    reported_at: Timestamp('When the source says it started or was reported'),
    first_seen_at: Timestamp('When a scan first saw it'),
    last_seen_at: Timestamp('When a scan last saw it'),
    updated_at: Timestamp('When a field a client acts on last changed (or it was cleared)'),
    cleared_at: t.Union([Timestamp('When it was cleared'), t.Null()]),
    source: t.Object({ name: t.UnionEnum(SOURCE_NAMES), id: t.String() }),
    confidence: t.Number({ minimum: 0, maximum: 1, description: "0–1, from the source's reliability scores" }),
  },
  { title: 'Event' },
);

export const Pagination = t.Object({
  limit: Int({ minimum: 1, maximum: 1000 }),
  total: Int({ minimum: 0, description: 'Events matching the query, over all pages' }),
  next_cursor: t.Union([t.String(), t.Null()], { description: 'Opaque; null on the last page' }),
  next: t.Union([t.String(), t.Null()], { description: 'Path of the next page, same filters' }),
});

export const ListMeta = t.Object({
  api_version: t.Literal('1.0'),
  generated_at: Timestamp('When this view of the data was built'),
  data_updated_at: t.Union([Timestamp('End of the last successful scan'), t.Null()]),
  update_interval_seconds: Int({ examples: [90] }),
  window_hours: Int({ examples: [24] }),
  city: t.Union([CityRef, t.Null()]),
  history: t.Optional(
    t.Object(
      { status: t.UnionEnum(['active', 'cleared', 'all']), from: Timestamp('Start of the range'), to: Timestamp('End of the range') },
      { description: 'Present when the page was read from history (Enterprise): the status and range it covers' },
    ),
  ),
});

export const EventList = t.Object({ data: t.Array(Event), pagination: Pagination, meta: ListMeta }, { title: 'EventList' });

export const EventFeatureCollection = t.Object(
  {
    type: t.Literal('FeatureCollection'),
    features: t.Array(
      t.Object({
        type: t.Literal('Feature'),
        id: t.String(),
        geometry: t.Union([LineString, t.Object({ type: t.Literal('Point'), coordinates: t.Tuple([t.Number(), t.Number()]) })]),
        properties: Event,
      }),
    ),
    pagination: Pagination,
    meta: ListMeta,
  },
  { title: 'EventFeatureCollection', description: 'format=geojson or Accept: application/geo+json' },
);

const listParams = {
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'Page size, 1–1000' })),
  cursor: t.Optional(
    t.String({ maxLength: 400, pattern: '^[A-Za-z0-9_-]+$', 'x-reason': 'must be a next_cursor value returned by this API', description: 'Opaque cursor from pagination.next_cursor' }),
  ),
  type: t.Optional(
    t.String({ pattern: `^${typeList}(,${typeList})*$`, 'x-reason': `must be a comma list of ${EVENT_TYPES.join(', ')}`, description: 'Comma list of event types', examples: ['accident,road_closure'] }),
  ),
  severity: t.Optional(
    t.String({ pattern: `^${severityList}(,${severityList})*$`, 'x-reason': `must be a comma list of ${SEVERITIES.join(', ')}`, description: 'Comma list of severities', examples: ['major'] }),
  ),
  bbox: t.Optional(
    t.String({ pattern: `^${num},${num},${num},${num}$`, 'x-reason': 'must be minLon,minLat,maxLon,maxLat in degrees', description: 'minLon,minLat,maxLon,maxLat (event point inside)', examples: ['28.8,40.9,29.2,41.2'] }),
  ),
  near: t.Optional(t.String({ pattern: `^${num},${num}$`, 'x-reason': 'must be lat,lon in degrees', description: 'lat,lon; events within radius_km of it', examples: ['41.0082,28.9784'] })),
  radius_km: t.Optional(t.Number({ exclusiveMinimum: 0, maximum: 200, description: 'Radius for near, km (default 10, max 200)', examples: [5] })),
  updated_since: t.Optional(
    t.String({
      pattern: RFC3339,
      'x-reason': RFC3339_REASON,
      description: 'RFC 3339; events updated or cleared since then (incremental polling)',
    }),
  ),
  // No default: UnionEnum would default to 'json', and an absent format must let Accept decide.
  format: t.Optional(t.UnionEnum(['json', 'geojson'], { default: undefined, description: 'json (the default) or geojson = a FeatureCollection; without it, Accept: application/geo+json also selects GeoJSON' })),
  status: t.Optional(
    t.UnionEnum(['active', 'cleared', 'all'], {
      default: undefined,
      description: 'Enterprise (history): active (the default), cleared or all. With status, from or to the list is read from the stored history instead of the 24-hour view.',
    }),
  ),
  from: t.Optional(t.String({ pattern: RFC3339, 'x-reason': RFC3339_REASON, description: 'Enterprise (history): events seen at or after this time (RFC 3339); default 24 hours ago; at most HISTORY_DAYS back' })),
  to: t.Optional(t.String({ pattern: RFC3339, 'x-reason': RFC3339_REASON, description: 'Enterprise (history): events first seen at or before this time (RFC 3339); default now' })),
};

export const ListQuery = t.Object({
  city: t.Optional(t.String({ maxLength: 100, description: 'Any spelling of one of the 81 provinces, or its plate code', examples: ['istanbul', 'İzmir', '06'] })),
  ...listParams,
});

export const CityListQuery = t.Object(listParams);

export const CityParams = t.Object({
  city: t.String({ description: 'Any spelling of one of the 81 provinces (İstanbul, istanbul, ISTANBUL, Antep, 34…)', examples: ['istanbul'] }),
});
