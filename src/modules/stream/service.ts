import { ApiError } from '../../http/problems.ts';
import type { ChangeFeed, EventFilter } from '../../stream/feed.ts';

export const MAX_STREAMS_PER_KEY = 5;
/** Frames a client may leave unread before it is dropped (it can resume with Last-Event-ID). */
export const MAX_BACKLOG = 10_000;
export const HEARTBEAT_MS = 15_000;
/** Tells EventSource clients how long to wait before reconnecting. */
export const RETRY_MS = 5_000;

const encoder = new TextEncoder();

/**
 * Open Server-Sent Events streams: at most five per key, one shared heartbeat timer for all of
 * them, and each stream fed by the change feed after its Last-Event-ID replay.
 */
export class StreamHub {
  private readonly perKey = new Map<string, number>();
  private readonly open = new Map<ReadableStreamDefaultController<Uint8Array>, { keyId: string; close: () => void }>();
  private heartbeat: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly feed: ChangeFeed,
    private readonly retryMs: number = RETRY_MS,
    /** Whether a key may still stream; checked at every heartbeat, so a revocation ends its streams. */
    private readonly keyAllowed: (keyId: string) => boolean = () => true,
  ) {}

  get size(): number {
    return this.open.size;
  }

  /** A stream for `keyId`, or 429 when the key already has five open. */
  openStream(keyId: string, filter: EventFilter, lastEventId: number | null, signal: AbortSignal): ReadableStream<Uint8Array> {
    const count = this.perKey.get(keyId) ?? 0;
    if (count >= MAX_STREAMS_PER_KEY) {
      throw new ApiError('rate_limited', `At most ${MAX_STREAMS_PER_KEY} live streams may be open per API key; close one first.`, {}, { 'retry-after': '60' }, 429);
    }
    this.perKey.set(keyId, count + 1);
    let unsubscribe = () => {};
    let closed = false;
    const hub = this;
    let ctrl: ReadableStreamDefaultController<Uint8Array>;
    const close = () => {
      if (closed) return;
      closed = true;
      unsubscribe();
      hub.open.delete(ctrl);
      const n = (hub.perKey.get(keyId) ?? 1) - 1;
      if (n <= 0) hub.perKey.delete(keyId);
      else hub.perKey.set(keyId, n);
      if (hub.open.size === 0 && hub.heartbeat !== null) {
        clearInterval(hub.heartbeat);
        hub.heartbeat = null;
      }
    };
    return new ReadableStream<Uint8Array>({
      start(controller) {
        ctrl = controller;
        const send = (frame: string) => {
          if (closed) return;
          try {
            controller.enqueue(encoder.encode(frame));
          } catch {
            close();
          }
        };
        send(`retry: ${hub.retryMs}\n\n`);
        const sub = hub.feed.subscribe(filter, send, lastEventId);
        unsubscribe = sub.unsubscribe;
        if (sub.truncated) send(': replay truncated to the most recent changes; resync with the list endpoint and updated_since\n\n');
        hub.open.set(controller, { keyId, close: () => {
          close();
          try {
            controller.close();
          } catch {}
        } });
        hub.heartbeat ??= setInterval(() => hub.ping(), HEARTBEAT_MS);
        signal.addEventListener('abort', close, { once: true });
      },
      cancel: close,
    });
  }

  /**
   * A comment line to every stream, so proxies and clients see the connection alive. Streams of
   * keys that were revoked (or left Enterprise) are ended, and so are clients that stopped reading.
   */
  ping(): void {
    const frame = encoder.encode(': ping\n\n');
    const allowed = new Map<string, boolean>();
    for (const [c, s] of [...this.open]) {
      let ok = allowed.get(s.keyId);
      if (ok === undefined) allowed.set(s.keyId, (ok = this.keyAllowed(s.keyId)));
      if (!ok || (c.desiredSize !== null && c.desiredSize < -MAX_BACKLOG)) {
        s.close();
        continue;
      }
      try {
        c.enqueue(frame);
      } catch {
        s.close();
      }
    }
  }

  /** Ends every stream (graceful stop). */
  closeAll(): void {
    for (const s of [...this.open.values()]) s.close();
    this.open.clear();
    if (this.heartbeat !== null) clearInterval(this.heartbeat);
    this.heartbeat = null;
  }
}

/** `Last-Event-ID` as a change sequence number, or 400 when it is not one. */
export function parseLastEventId(value: string | null): number | null {
  if (value === null || value.trim() === '') return null;
  const v = value.trim();
  if (!/^\d{1,15}$/.test(v)) {
    throw new ApiError('invalid_parameter', "Last-Event-ID must be the id of an event this stream sent (a change sequence number).", {
      invalid_params: [{ name: 'Last-Event-ID', reason: 'must be a whole number sent as an event id by this stream' }],
    });
  }
  return Number(v);
}
