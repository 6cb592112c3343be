import type { Plan } from '../db/schema/limits.ts';

/**
 * The plan a request runs on, resolved by the limits gate before routing and handed to routes
 * (see `accessContext` in src/http/plugins/limits.ts). No key means Free, counted per client IP.
 */
export interface Access {
  readonly plan: Plan;
  /** The API key's id, or null for a request without a key. */
  readonly keyId: string | null;
}

export const ANONYMOUS: Access = Object.freeze({ plan: 'free', keyId: null });
