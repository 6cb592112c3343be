import { t } from 'elysia';
import { ListQuery } from '../events/model.ts';

const { city, type, severity, bbox, near, radius_km } = ListQuery.properties;

/** The list filters that make sense for a stream of changes (no paging, no time range). */
export const StreamQuery = t.Object({ city, type, severity, bbox, near, radius_km });
