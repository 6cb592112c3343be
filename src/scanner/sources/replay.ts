/**
 * The `replay` source: serves recorded upstream payloads from a directory, parsed by the same
 * parsers as the live adapters. Layout (see ./README.md):
 *
 *   REPLAY_DIR/waze/*.json     one recorded georss (or partner-feed) response per file
 *   REPLAY_DIR/tomtom/*.json   one recorded incidentDetails response per file
 *   REPLAY_DIR/here/*.json     one recorded /v7/incidents response per file
 *
 * Every `fetchCell` re-lists the directory and re-parses only the files whose mtime/size/inode
 * changed, so an operator can edit the recordings between scans and watch events appear and clear.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { NormalizedItem } from '../../domain/event.ts';
import { parseHere } from './here.ts';
import type { Cell, CellResult, Source, SourceStatus } from './source.ts';
import { parseTomTom } from './tomtom.ts';
import { inBBox, isRecord } from './util.ts';
import { parseWaze } from './waze.ts';

export const REPLAY_KINDS = ['waze', 'tomtom', 'here'] as const;
export type ReplayKind = (typeof REPLAY_KINDS)[number];

const PARSERS: Readonly<Record<ReplayKind, (payload: unknown) => NormalizedItem[]>> = {
  waze: parseWaze,
  tomtom: parseTomTom,
  here: parseHere,
};

export interface ReplaySourceOptions {
  dir: string;
  /** How many cells the scanner may filter at once (default 8; there is no upstream to spare). */
  concurrency?: number;
}

interface FileEntry {
  signature: string;
  items: NormalizedItem[];
  error: string | null;
}

export type ReplayLoad =
  | { ok: true; items: NormalizedItem[]; errors: string[] }
  | { ok: false; error: string };

function errorCode(err: unknown): string {
  if (err && typeof err === 'object' && 'code' in err && typeof err.code === 'string') return err.code;
  return err instanceof Error ? err.message : String(err);
}

/** Parse one recording of `kind`; items come back as `source: 'replay'`, ids prefixed `kind:`. */
export function parseRecording(kind: ReplayKind, body: string): { items: NormalizedItem[]; error: string | null } {
  let payload: unknown;
  try {
    payload = JSON.parse(body);
  } catch {
    return { items: [], error: `malformed or truncated JSON (${body.length} characters)` };
  }
  if (!isRecord(payload)) return { items: [], error: 'not a JSON object' };
  const items = PARSERS[kind](payload).map((item) => ({
    ...item,
    source: 'replay' as const,
    sourceId: `${kind}:${item.sourceId}`,
  }));
  return { items, error: null };
}

export class ReplaySource implements Source {
  readonly name = 'replay' as const;
  readonly concurrency: number;
  readonly dir: string;
  private readonly files = new Map<string, FileEntry>();
  private inflight: Promise<ReplayLoad> | null = null;
  private lastErrors: string[] = [];

  constructor(options: ReplaySourceOptions) {
    this.dir = options.dir;
    this.concurrency = options.concurrency ?? 8;
  }

  /** Errors of the last load, one per bad file (`tomtom/x.json: malformed …`). */
  fileErrors(): readonly string[] {
    return this.lastErrors;
  }

  /** Read the recordings (changed files only); concurrent callers share one pass. */
  load(): Promise<ReplayLoad> {
    if (!this.inflight) {
      this.inflight = this.readAll().finally(() => {
        this.inflight = null;
      });
    }
    return this.inflight;
  }

  private async readAll(): Promise<ReplayLoad> {
    let problem: string | null = null;
    try {
      const st = await stat(this.dir);
      if (!st.isDirectory()) problem = `replay directory "${this.dir}" is not a directory`;
    } catch (err) {
      problem = `replay directory "${this.dir}" is missing or unreadable (${errorCode(err)})`;
    }
    if (problem !== null) {
      this.lastErrors = [problem];
      return { ok: false, error: problem };
    }

    const seen = new Set<string>();
    const byId = new Map<string, NormalizedItem>();
    const errors: string[] = [];
    for (const kind of REPLAY_KINDS) {
      const sub = join(this.dir, kind);
      let names: string[];
      try {
        names = (await readdir(sub)).filter((n) => n.endsWith('.json')).sort();
      } catch (err) {
        if (errorCode(err) !== 'ENOENT') errors.push(`${kind}/: unreadable (${errorCode(err)})`);
        continue;
      }
      for (const name of names) {
        const rel = `${kind}/${name}`;
        const path = join(sub, name);
        let entry: FileEntry;
        try {
          const st = await stat(path);
          if (!st.isFile()) continue;
          const signature = `${st.mtimeMs}:${st.size}:${st.ino}`;
          const cached = this.files.get(rel);
          if (cached && cached.signature === signature) {
            entry = cached;
          } else {
            const parsed = parseRecording(kind, await readFile(path, 'utf8'));
            // A recording caught mid-write or broken by an edit keeps its last good items: a bad
            // file must not clear its events two scans later, as a failed upstream cell would not.
            entry =
              parsed.error === null || cached === undefined || cached.items.length === 0
                ? { signature, items: parsed.items, error: parsed.error }
                : { signature, items: cached.items, error: `${parsed.error}; serving its last good version` };
            this.files.set(rel, entry);
          }
        } catch (err) {
          const code = errorCode(err);
          // Gone since the listing: removed, as if it had not been listed.
          if (code === 'ENOENT') {
            this.files.delete(rel);
            continue;
          }
          // Unreadable for now (permissions, I/O): like a broken file, it keeps its last good items.
          const cached = this.files.get(rel);
          entry = { signature: '', items: cached?.items ?? [], error: `unreadable (${code})${cached !== undefined && cached.items.length > 0 ? '; serving its last good version' : ''}` };
          if (cached !== undefined) this.files.set(rel, entry);
        }
        seen.add(rel);
        if (entry.error !== null) errors.push(`${rel}: ${entry.error}`);
        // Files are read in name order; a later recording of the same item wins.
        for (const item of entry.items) byId.set(item.sourceId, item);
      }
    }
    for (const rel of [...this.files.keys()]) if (!seen.has(rel)) this.files.delete(rel);
    this.lastErrors = errors;
    return { ok: true, items: [...byId.values()], errors };
  }

  async fetchCell(cell: Cell): Promise<CellResult> {
    const loaded = await this.load();
    if (!loaded.ok) return { ok: false, kind: 'network', error: loaded.error, requests: 0 };
    return { ok: true, items: loaded.items.filter((i) => inBBox(i.location, cell.bbox)), requests: 0 };
  }

  status(): SourceStatus {
    return {
      name: 'replay',
      state: 'ok',
      until: null,
      reason: this.lastErrors.length > 0 ? this.lastErrors.join('; ') : null,
    };
  }
}

export function createReplaySource(options: ReplaySourceOptions): ReplaySource {
  return new ReplaySource(options);
}
