import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq, inArray } from 'drizzle-orm';
import { events, type NewEventRow } from '../../src/db/schema/index.ts';
import { testApp, type TestApp } from '../helpers/app.ts';
import { eventRow, insertEvents, insertScan } from '../helpers/factories.ts';
import { byListOrder, expectInvalidParam, getList, type ListBody } from '../helpers/http.ts';

// Cursor pagination (CONTRACT §2): every page walked, the order newest reported_at first then id,
// and a cursor that keeps its place while scans change the data underneath it.

let t: TestApp;
let rows: NewEventRow[];

function seed(now: number, count: number, prefix: string, newestAt: number): NewEventRow[] {
  // Groups of three share a reported_at so the id tie-break is exercised; ids are inserted in an
  // order unrelated to the list order.
  return Array.from({ length: count }, (_, i) =>
    eventRow(
      {
        id: `${prefix}${String((i * 97) % count).padStart(4, '0')}`,
        plate: [34, 6, 35][i % 3]!,
        type: (['accident', 'jam', 'hazard', 'road_closure'] as const)[i % 4]!,
        reportedAt: newestAt - Math.floor(i / 3) * 60_000,
      },
      now,
    ),
  );
}

beforeAll(async () => {
  t = await testApp();
  rows = seed(t.clock.now, 250, 'evt_p', t.clock.now - 60_000);
  insertEvents(t.db.db, rows);
  insertScan(t.db.db, t.clock.now - 10_000);
  t.readModel.refresh();
});
afterAll(() => t.cleanup());

async function walk(path: string): Promise<{ ids: string[]; pages: ListBody[] }> {
  const pages: ListBody[] = [];
  let next: string | null = path;
  while (next !== null) {
    const body: ListBody = await getList(t, next);
    pages.push(body);
    expect(pages.length).toBeLessThan(100);
    next = body.pagination.next;
  }
  return { ids: pages.flatMap((p) => p.data.map((e) => e.id)), pages };
}

describe('walking all pages', () => {
  test('250 events at limit=37: 7 pages, none missing, no duplicates, contract order', async () => {
    const { ids, pages } = await walk('/api/v1/events?limit=37');
    expect(pages.map((p) => p.data.length)).toEqual([37, 37, 37, 37, 37, 37, 28]);
    expect(new Set(ids).size).toBe(250);
    expect(ids).toEqual([...rows].sort(byListOrder).map((r) => r.id));
    for (const p of pages) {
      expect(p.pagination.total).toBe(250);
      expect(p.pagination.limit).toBe(37);
    }
    // next_cursor and next agree; null together on the last page.
    for (const p of pages.slice(0, -1)) {
      expect(p.pagination.next_cursor).toBeString();
      expect(p.pagination.next).toContain(`cursor=${p.pagination.next_cursor}`);
      expect(p.pagination.next).toStartWith('/api/v1/events?');
    }
    expect(pages.at(-1)!.pagination).toMatchObject({ next_cursor: null, next: null });
  });

  test('order on the wire: reported_at descending, ties by id ascending', async () => {
    const { pages } = await walk('/api/v1/events?limit=1000');
    const data = pages[0]!.data;
    for (let i = 1; i < data.length; i++) {
      const a = data[i - 1]!;
      const b = data[i]!;
      const ok = a.reported_at > b.reported_at || (a.reported_at === b.reported_at && a.id < b.id);
      expect({ i, a: [a.reported_at, a.id], b: [b.reported_at, b.id], ok }).toMatchObject({ ok: true });
    }
  });

  test('following next_cursor by hand equals following next', async () => {
    const first = await getList(t, '/api/v1/events?limit=37');
    const byCursor = await getList(t, `/api/v1/events?cursor=${first.pagination.next_cursor}&limit=37`);
    const byNext = await getList(t, first.pagination.next!);
    expect(byCursor.data.map((e) => e.id)).toEqual(byNext.data.map((e) => e.id));
  });

  test('next keeps the filters, on the per-city route too', async () => {
    const { ids, pages } = await walk('/api/v1/events/istanbul?type=accident,jam&limit=5');
    for (const p of pages.slice(0, -1)) {
      expect(p.pagination.next).toStartWith('/api/v1/events/istanbul?');
      expect(p.pagination.next).toContain('type=accident%2Cjam');
      expect(p.pagination.next).toContain('limit=5');
    }
    expect(ids).toEqual(
      [...rows]
        .filter((r) => r.plate === 34 && (r.type === 'accident' || r.type === 'jam'))
        .sort(byListOrder)
        .map((r) => r.id),
    );
  });

  test('next keeps format=geojson', async () => {
    const res = await t.request('/api/v1/events?format=geojson&limit=100');
    const body = await res.json();
    expect(body.pagination.next).toContain('format=geojson');
    const second = await t.request(body.pagination.next);
    expect(second.headers.get('content-type')).toStartWith('application/geo+json');
    const b2 = await second.json();
    expect(b2.features).toHaveLength(100);
  });

  test('a cursor with a different limit continues from the same place', async () => {
    const a = await getList(t, '/api/v1/events?limit=10');
    const b = await getList(t, `/api/v1/events?limit=3&cursor=${a.pagination.next_cursor}`);
    const all = [...rows].sort(byListOrder).map((r) => r.id);
    expect(b.data.map((e) => e.id)).toEqual(all.slice(10, 13));
  });

  test('a cursor from the per-city list is usable on the same list only in meaning, never an error', async () => {
    const a = await getList(t, '/api/v1/events/ankara?limit=2');
    const res = await t.request(`/api/v1/events?cursor=${a.pagination.next_cursor}&limit=2`);
    expect(res.status).toBe(200);
  });

  test('garbage cursor → 400', async () => {
    await expectInvalidParam(await t.request('/api/v1/events?cursor=%%%'), 'cursor');
  });
});

describe('stability while the data changes', () => {
  test('page 2 continues exactly after page 1 after inserts, clears and a refresh', async () => {
    const t2 = await testApp();
    try {
      const now = t2.clock.now;
      const base = seed(now, 250, 'evt_s', now - 60_000);
      insertEvents(t2.db.db, base);
      insertScan(t2.db.db, now - 10_000);
      t2.readModel.refresh();

      const page1 = (await t2.request('/api/v1/events?limit=37').then((r) => r.json())) as ListBody;
      const p1ids = page1.data.map((e) => e.id);
      const last = page1.data.at(-1)!;
      const ordered = [...base].sort(byListOrder);
      expect(p1ids).toEqual(ordered.slice(0, 37).map((r) => r.id));

      // A scan: 20 newer events, 10 clears (some on page 1, the item right after the cursor,
      // and some further on), 5 older events appearing mid-list; then the read model refreshes.
      t2.clock.now += 90_000;
      const later = t2.clock.now;
      insertEvents(t2.db.db, seed(later, 20, 'evt_new', later - 1000));
      const mid = ordered[60]!.reportedAt;
      insertEvents(
        t2.db.db,
        Array.from({ length: 5 }, (_, i) => eventRow({ id: `evt_mid${i}`, reportedAt: mid, lastSeenAt: later - 1000 }, later)),
      );
      const toClear = [ordered[0]!, ordered[5]!, ordered[36]!, ordered[37]!, ordered[38]!, ordered[80]!, ordered[81]!, ordered[120]!, ordered[200]!, ordered[249]!].map((r) => r.id);
      t2.db.db.update(events).set({ status: 'cleared', clearedAt: later - 500, updatedAt: later - 500 }).where(inArray(events.id, toClear)).run();
      t2.db.db.update(events).set({ lastSeenAt: later - 1000 }).where(eq(events.status, 'active')).run();
      insertScan(t2.db.db, later - 200);
      t2.readModel.refresh();

      const page2 = (await t2.request(page1.pagination.next!).then((r) => r.json())) as ListBody;
      const p2ids = page2.data.map((e) => e.id);
      // What "exactly after the last item of page 1" means in the new data.
      const now2 = [...base.filter((r) => !toClear.includes(r.id)), ...Array.from({ length: 5 }, (_, i) => ({ id: `evt_mid${i}`, reportedAt: mid }))].sort(byListOrder);
      const after = now2.filter((r) => r.reportedAt < Date.parse(last.reported_at) || (r.reportedAt === Date.parse(last.reported_at) && r.id > last.id));
      expect(p2ids).toEqual(after.slice(0, 37).map((r) => r.id));
      expect(p2ids.filter((id) => p1ids.includes(id))).toEqual([]);
      expect(p2ids.some((id) => id.startsWith('evt_new'))).toBe(false);
      expect(p2ids).not.toContain(ordered[37]!.id);
      expect(page2.pagination.total).toBe(250 + 20 + 5 - 10);

      // The rest of the walk still ends, without duplicates, having seen every old survivor.
      const seen = [...p1ids, ...p2ids];
      let next = page2.pagination.next;
      while (next !== null) {
        const b = (await t2.request(next).then((r) => r.json())) as ListBody;
        seen.push(...b.data.map((e) => e.id));
        next = b.pagination.next;
      }
      expect(new Set(seen).size).toBe(seen.length);
      for (const r of after) expect(seen).toContain(r.id);
    } finally {
      t2.cleanup();
    }
  });

  test('a cursor whose item was cleared still continues after its position', async () => {
    const t3 = await testApp();
    try {
      const now = t3.clock.now;
      const base = seed(now, 30, 'evt_c', now - 60_000);
      insertEvents(t3.db.db, base);
      t3.readModel.refresh();
      const page1 = (await t3.request('/api/v1/events?limit=10').then((r) => r.json())) as ListBody;
      const last = page1.data.at(-1)!.id;
      t3.db.db.update(events).set({ status: 'cleared', clearedAt: now, updatedAt: now }).where(eq(events.id, last)).run();
      t3.readModel.refresh();
      const page2 = (await t3.request(page1.pagination.next!).then((r) => r.json())) as ListBody;
      expect(page2.data.map((e) => e.id)).toEqual([...base].sort(byListOrder).slice(10, 20).map((r) => r.id));
    } finally {
      t3.cleanup();
    }
  });
});
