import { afterEach, beforeEach, expect, test } from 'bun:test';
import { eventChanges, type EventRow } from '../../src/db/schema/index.ts';
import { KeyStore } from '../../src/keys/store.ts';
import { toApiEvent } from '../../src/read-model/event-json.ts';
import { addEndpoint, listSubscriptions } from '../../src/webhooks/endpoints.ts';
import { fanOut } from '../../src/webhooks/fanout.ts';
import { tempDb, type TempDb } from '../helpers/db.ts';
import { eventRow } from '../helpers/factories.ts';

let t: TempDb;
beforeEach(() => {
  t = tempDb();
});
afterEach(() => t.cleanup());

const lookup = async () => [{ address: '93.184.216.34', family: 4 }];
function change(): void {
  const ev = toApiEvent(eventRow() as EventRow);
  t.db.insert(eventChanges).values({ eventId: ev.id, change: 'created', at: Date.now(), scanId: 1, payload: JSON.stringify(ev) }).run();
}
const pending = () => t.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'pending'").get()!.n;

test("revoking a key disables its subscriptions, gives up what was pending, and fans nothing more out to them", async () => {
  const keys = new KeyStore(t.sqlite);
  const gone = keys.create({ plan: 'enterprise', name: 'gone', now: 1 }).record;
  const kept = keys.create({ plan: 'enterprise', name: 'kept', now: 1 }).record;
  await addEndpoint(t.sqlite, { keyId: gone.id, url: 'https://gone.example.com/h' }, { now: 1, allowPrivate: false, lookup });
  await addEndpoint(t.sqlite, { keyId: kept.id, url: 'https://kept.example.com/h' }, { now: 1, allowPrivate: false, lookup });
  change();
  await fanOut(t.sqlite, Date.now());
  expect(pending()).toBe(2);

  keys.revoke(gone.id, 2);
  const [sub] = listSubscriptions(t.sqlite, gone.id);
  expect(sub!.status).toBe('disabled');
  expect(sub!.disabled_reason).toBe('API key revoked');
  expect(pending()).toBe(1);

  change();
  const r = await fanOut(t.sqlite, Date.now());
  expect(r.deliveries).toBe(1);
  const perKey = t.sqlite
    .query<{ key_id: string; n: number }, []>("SELECT e.key_id, count(*) AS n FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id WHERE d.status = 'pending' GROUP BY e.key_id")
    .all();
  expect(perKey).toEqual([{ key_id: kept.id, n: 2 }]);
});
