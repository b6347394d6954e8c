/**
 * JSON helpers shared by the tests: RFC 6901 JSON pointers into bodies, and the check of a regression
 * case's `expect.upstream_request` (fixtures/shared/cases/CASES.md) against the body sent upstream.
 */
import { expect } from "bun:test";

/** RFC 6901 JSON pointer lookup (`/messages/0/content`, `~1` for `/`, `~0` for `~`); undefined when any step is missing. */
export function pointer(doc: unknown, ptr: string): unknown {
  if (ptr === "") return doc;
  let cur: any = doc;
  for (const raw of ptr.slice(1).split("/")) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (cur === null || typeof cur !== "object" || !(key in cur)) return undefined;
    cur = cur[key];
  }
  return cur;
}

/** A regression case's `expect.upstream_request`: pointers with the value they must hold, pointers that must be absent. */
export interface UpstreamExpectation {
  equals?: Record<string, unknown>;
  absent?: string[];
}

/** Checks a body sent upstream against a case's expectation; a failure names the pointer. */
export function expectUpstream(body: unknown, spec: UpstreamExpectation): void {
  for (const [p, v] of Object.entries(spec.equals ?? {})) expect({ pointer: p, value: pointer(body, p) }).toEqual({ pointer: p, value: v });
  for (const p of spec.absent ?? []) expect({ pointer: p, value: pointer(body, p) }).toEqual({ pointer: p, value: undefined });
}
