import type { Database } from 'bun:sqlite';
import { Elysia, type AnyElysia } from 'elysia';
import type { Clock } from '../clock.ts';
import type { Logger } from '../log.ts';
import { docsRoutes } from '../modules/docs/index.ts';
import { eventsRoutes } from '../modules/events/index.ts';
import { healthRoutes } from '../modules/health/index.ts';
import type { HealthReport } from '../modules/health/service.ts';
import { statsRoutes } from '../modules/stats/index.ts';
import { streamRoutes } from '../modules/stream/index.ts';
import { webhooksRoutes } from '../modules/webhooks/index.ts';
import type { StreamHub } from '../modules/stream/service.ts';
import type { ReadModel } from '../read-model/read-model.ts';
import { errorHandler } from './plugins/errors.ts';
import { methodGuard } from './plugins/method-guard.ts';
import { requestContext } from './plugins/request-context.ts';

export interface AppDeps {
  readModel: ReadModel;
  /** Read-only use: Enterprise history queries. */
  sqlite: Database;
  historyDays: number;
  /** Live streams of the event_changes outbox (Enterprise). */
  streams: StreamHub;
  health: () => HealthReport;
  clock: Clock;
  logger: Logger;
  release: string;
  /** Absolute base URL for problem `type` links; '' = the request's own origin. */
  publicUrl: string;
  /**
   * Runs for every request right after the request id is set and before the method check and
   * routing: the place where per-IP limits, keys and quotas attach their headers or deny.
   */
  gate?: AnyElysia;
}

/** Builds the HTTP app. It never listens: `serve` does, tests use `app.handle` or port 0. */
export function createApp(deps: AppDeps) {
  const app = new Elysia({ name: 'trafik.app' })
    .use(errorHandler({ publicUrl: deps.publicUrl, logger: deps.logger }))
    .use(requestContext);
  if (deps.gate) app.use(deps.gate);
  const full: AnyElysia = app
    .use(methodGuard(deps.publicUrl))
    .use(streamRoutes({ hub: deps.streams, clock: deps.clock }))
    .use(eventsRoutes({ readModel: deps.readModel, clock: deps.clock, history: { sqlite: deps.sqlite, historyDays: deps.historyDays } }))
    .use(statsRoutes({ readModel: deps.readModel, clock: deps.clock, history: { sqlite: deps.sqlite, historyDays: deps.historyDays } }))
    .use(healthRoutes({ check: deps.health }))
    .use(webhooksRoutes({ sqlite: deps.sqlite }))
    .use(docsRoutes(deps.release, (): AnyElysia => full));
  return full;
}

export type App = ReturnType<typeof createApp>;
