/**
 * A client key's scopes as the admin API takes them (`POST /admin/api/keys`, `PATCH /admin/api/keys/{name}`;
 * `switchyard keys create|set --scope`, the Keys page's admin scope checkbox). SPEC 9.3: `admin` is the
 * only scope, and lets the key use the admin API and the dashboard. A module of its own: both routes'
 * modules import it (admin-api.ts and key-change.ts import each other, so neither can define it for the
 * other at load time).
 */
import * as v from "valibot";

/** A list of scopes, each `admin` (a misspelt one would silently make a key without it: a 400 naming it). */
export const KeyScopes = v.array(
  v.pipe(
    v.string("each scope is a string"),
    v.check((s) => s === "admin", (i) => `unknown scope ${JSON.stringify(i.input)}: the only scope is admin`),
  ),
  "scopes must be a list of strings",
);
