import { afterEach, beforeEach, expect, test } from 'bun:test';
import { eventChanges, type EventRow } from '../../src/db/schema/index.ts';
import type { ChangeType, TrafficEvent } from '../../src/domain/event.ts';
import { toApiEvent } from '../../src/read-model/event-json.ts';
import { ChangeFeed, MAX_REPLAY } from '../../src/stream/feed.ts';
import { eventFilter } from '../../src/stream/filter.ts';
import { tempDb, type TempDb } from '../helpers/db.ts';
import { eventRow } from '../helpers/factories.ts';

let t: TempDb;
beforeEach(() => {
  t = tempDb();
});
afterEach(() => t.cleanup());

/** An outbox payload exactly as the scanner writes it. */
function apiEvent(over: Parameters<typeof eventRow>[0] = {}): TrafficEvent {
  return toApiEvent(eventRow(over) as EventRow);
}

function addChange(change: ChangeType, over: Parameters<typeof eventRow>[0] = {}): TrafficEvent {
  const ev = apiEvent(over);
  t.db.insert(eventChanges).values({ eventId: ev.id, change, at: Date.now(), scanId: 1, payload: JSON.stringify(ev) }).run();
  return ev;
}

const all = eventFilter({ plate: null, types: null, severities: null, bbox: null, near: null });

function parse(frames: string[]): { id: number; event: string; data: TrafficEvent }[] {
  return frames.map((f) => {
    const m = /^id: (\d+)\nevent: (\S+)\ndata: (.*)\n\n$/s.exec(f);
    if (!m) throw new Error(`not an SSE frame: ${JSON.stringify(f)}`);
    return { id: Number(m[1]), event: m[2]!, data: JSON.parse(m[3]!) };
  });
}

test('starts after the changes already in the outbox and delivers new ones once, in order', () => {
  addChange('created');
  const feed = new ChangeFeed(t.sqlite);
  const got: string[] = [];
  feed.subscribe(all, (f) => got.push(f), null);
  expect(feed.poll()).toBe(0);
  const a = addChange('created');
  const b = addChange('updated', { id: a.id });
  const c = addChange('cleared', { id: a.id });
  expect(feed.poll()).toBe(3);
  expect(feed.poll()).toBe(0);
  const frames = parse(got);
  expect(frames.map((f) => f.event)).toEqual(['traffic_event.created', 'traffic_event.updated', 'traffic_event.cleared']);
  expect(frames.map((f) => f.id)).toEqual([...frames.map((f) => f.id)].sort((x, y) => x - y));
  expect(frames[0]!.data.id).toBe(a.id);
  expect(b.id).toBe(c.id);
});

test('filters per subscriber with the list filters', () => {
  const feed = new ChangeFeed(t.sqlite);
  const ankaraJams: string[] = [];
  const majors: string[] = [];
  feed.subscribe(eventFilter({ plate: 6, types: new Set(['jam']), severities: null, bbox: null, near: null }), (f) => ankaraJams.push(f), null);
  feed.subscribe(eventFilter({ plate: null, types: null, severities: new Set(['major']), bbox: null, near: null }), (f) => majors.push(f), null);
  addChange('created', { plate: 6, type: 'jam', severity: 'minor' });
  addChange('created', { plate: 34, type: 'jam', severity: 'major' });
  addChange('created', { plate: 6, type: 'accident', severity: 'major' });
  feed.poll();
  expect(parse(ankaraJams).map((f) => [f.data.city.plate, f.data.type])).toEqual([[6, 'jam']]);
  expect(parse(majors).map((f) => f.data.severity)).toEqual(['major', 'major']);
});

test('replays what a returning client missed after its Last-Event-ID, then goes live without a gap', () => {
  const feed = new ChangeFeed(t.sqlite);
  addChange('created');
  addChange('created');
  feed.poll();
  const firstSeq = feed.seq - 1;
  addChange('created'); // committed but not yet polled
  const got: string[] = [];
  const { truncated } = feed.subscribe(all, (f) => got.push(f), firstSeq);
  expect(truncated).toBe(false);
  feed.poll();
  addChange('updated');
  feed.poll();
  expect(parse(got).map((f) => f.id)).toEqual([firstSeq + 1, firstSeq + 2, firstSeq + 3]);
});

test('a replay longer than MAX_REPLAY is cut to the most recent changes and says so', () => {
  const feed = new ChangeFeed(t.sqlite);
  const rows = Array.from({ length: MAX_REPLAY + 5 }, (_, i) => ({ eventId: `evt_${i}`, change: 'created' as const, at: i, scanId: 1, payload: JSON.stringify(apiEvent()) }));
  for (let i = 0; i < rows.length; i += 500) t.db.insert(eventChanges).values(rows.slice(i, i + 500)).run();
  feed.poll();
  const got: string[] = [];
  const { truncated } = feed.subscribe(all, (f) => got.push(f), 0);
  expect(truncated).toBe(true);
  expect(got).toHaveLength(MAX_REPLAY);
  expect(parse([got[0]!])[0]!.id).toBe(6);
});

test('with nobody subscribed a poll skips the rows, and a later Last-Event-ID still replays them', () => {
  const feed = new ChangeFeed(t.sqlite);
  const start = feed.seq;
  const skipped = [addChange('created'), addChange('created')];
  expect(feed.poll()).toBe(2);
  expect(feed.seq).toBe(start + 2);
  const got: string[] = [];
  feed.subscribe(all, (f) => got.push(f), start);
  const live = addChange('updated');
  feed.poll();
  expect(parse(got).map((f) => f.data.id)).toEqual([...skipped, live].map((e) => e.id));
});
