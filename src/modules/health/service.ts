import { desc, inArray } from 'drizzle-orm';
import { iso, type Clock } from '../../clock.ts';
import type { Db } from '../../db/client.ts';
import { scanRuns, type ScanRunRow } from '../../db/schema/index.ts';
import { errorText } from '../../log.ts';
import type { SourceStatus } from '../../scanner/sources/source.ts';

type Status = 'pass' | 'warn' | 'fail';

/** What health needs to know about the scan loop; the wiring provides it, tests fake it. */
export interface ScanLoopView {
  sources: readonly string[];
  intervalSeconds: number;
  nextScanAt(): number | null;
  sourceStatuses(): SourceStatus[];
}

export interface HealthReport {
  status: Status;
  version: '1.0';
  release: string;
  uptime_seconds: number;
  time: string;
  checks: {
    database: { status: Status; latency_ms: number | null; error?: string };
    scanner: {
      status: Status;
      sources: string[];
      last_scan_started_at: string | null;
      last_success_at: string | null;
      age_seconds: number | null;
      duration_ms: number | null;
      cells_total: number;
      cells_ok: number;
      cells_failed: number;
      next_scan_at: string | null;
      backing_off: { source: string; until: string | null; reason: string | null }[];
      reasons: string[];
    };
  };
  events: { active: number };
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * CONTRACT §2 health: `warn` before the first completed scan, when the last success is older than
 * two intervals, or when cells failed or a source backs off; `fail` when the database does not
 * answer or nothing has succeeded for 24 hours.
 */
export function checkHealth(deps: { db: Db; clock: Clock; startedAt: number; release: string; loop: ScanLoopView; activeEvents: () => number }): HealthReport {
  const now = deps.clock();
  let dbStatus: HealthReport['checks']['database'];
  let latest: ScanRunRow | undefined;
  let lastSuccess: ScanRunRow | undefined;
  const t0 = performance.now();
  try {
    latest = deps.db.select().from(scanRuns).orderBy(desc(scanRuns.id)).limit(1).get();
    lastSuccess = deps.db.select().from(scanRuns).where(inArray(scanRuns.status, ['ok', 'partial'])).orderBy(desc(scanRuns.id)).limit(1).get();
    dbStatus = { status: 'pass', latency_ms: Math.round((performance.now() - t0) * 1000) / 1000 };
  } catch (err) {
    dbStatus = { status: 'fail', latency_ms: null, error: errorText(err).replace(/^\w*Error: /, '') };
  }

  const reasons: string[] = [];
  let scanStatus: Status = 'pass';
  const bump = (s: Status, why: string) => {
    reasons.push(why);
    if (s === 'fail' || (s === 'warn' && scanStatus === 'pass')) scanStatus = s;
  };
  const intervalMs = deps.loop.intervalSeconds * 1000;
  const successAt = lastSuccess?.finishedAt ?? null;
  if (dbStatus.status === 'fail') bump('fail', 'database unreachable');
  else if (successAt === null) {
    if (now - deps.startedAt >= DAY_MS) bump('fail', 'no scan has succeeded for 24 hours');
    else bump('warn', 'no scan has completed yet');
  } else if (now - successAt >= DAY_MS) bump('fail', 'no scan has succeeded for 24 hours');
  else if (now - successAt > 2 * intervalMs) bump('warn', 'the last successful scan is older than two intervals');
  const lastDone = latest?.finishedAt != null ? latest : lastSuccess;
  if (lastDone !== undefined && lastDone.cellsFailed > 0) bump('warn', `${lastDone.cellsFailed} of ${lastDone.cellsTotal} cells failed in the last scan`);
  const statuses = deps.loop.sourceStatuses();
  const backingOff = statuses.filter((s) => s.state === 'backing_off');
  for (const s of backingOff) bump('warn', `source ${s.name} is backing off${s.reason ? `: ${s.reason}` : ''}`);
  // A source that works but reports a problem (replay: a recording that does not parse).
  for (const s of statuses) if (s.state === 'ok' && s.reason) bump('warn', `source ${s.name}: ${s.reason}`);

  const next = deps.loop.nextScanAt();
  const overall: Status = dbStatus.status === 'fail' ? 'fail' : scanStatus;
  return {
    status: overall,
    version: '1.0',
    release: deps.release,
    uptime_seconds: Math.max(0, Math.floor((now - deps.startedAt) / 1000)),
    time: iso(now),
    checks: {
      database: dbStatus,
      scanner: {
        status: scanStatus,
        sources: [...deps.loop.sources],
        last_scan_started_at: latest ? iso(latest.startedAt) : null,
        last_success_at: successAt === null ? null : iso(successAt),
        age_seconds: successAt === null ? null : Math.max(0, Math.floor((now - successAt) / 1000)),
        duration_ms: lastDone?.finishedAt != null ? lastDone.finishedAt - lastDone.startedAt : null,
        cells_total: lastDone?.cellsTotal ?? 0,
        cells_ok: lastDone?.cellsOk ?? 0,
        cells_failed: lastDone?.cellsFailed ?? 0,
        next_scan_at: next === null ? null : iso(next),
        backing_off: backingOff.map((s) => ({ source: s.name, until: s.until === null ? null : iso(s.until), reason: s.reason })),
        reasons,
      },
    },
    events: { active: deps.activeEvents() },
  };
}
