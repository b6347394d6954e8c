/**
 * A key's use of its current fixed minute window across instances, read from the shared key counters'
 * shares (src/limits/shared-counters.ts `minuteUse`, SPEC 9.6 with D-2): the requests (rpm) and tokens
 * (tpm) its instances reported, as last known here (within about a second; watched keys included).
 */
import type { KeyLimits, MinuteUse } from "../../pipeline/ports.ts";
import type { Share } from "./quota-share.ts";

/** A fixed minute window's length, ms. */
export const MINUTE = 60_000;

/**
 * The key's rpm and tpm use in the minute holding `dbNow` (ms on the database's clock) from `shares`
 * (keyed `name@windowStart`, pools `key:ID:rpm` and `key:ID:tpm`); at a limit, `freesInMs` until the
 * minute's end (the fixed window's end frees it).
 */
export function readMinuteUse(shares: ReadonlyMap<string, Share>, key: string, limits: KeyLimits, dbNow: number): MinuteUse {
  const start = Math.floor(dbNow / MINUTE) * MINUTE;
  const of = (name: string, limit: number) => {
    const s = shares.get(`${name}@${start}`);
    const n = s ? s.othersUsed + s.used : 0;
    return n >= limit ? { used: n, limit, freesInMs: Math.max(1, start + MINUTE - dbNow) } : { used: n, limit };
  };
  const out: MinuteUse = {};
  if (limits.rpm !== undefined) out.requests = of(`key:${key}:rpm`, limits.rpm);
  if (limits.tpm !== undefined) out.tokens = of(`key:${key}:tpm`, limits.tpm);
  return out;
}
