/**
 * Keys (SPEC 9.4, 9.6): client keys with their scopes, tags, limits and budget use; create (the secret
 * is shown once, in this view only, and never again) and revoke. No secret is ever listed.
 */
import { useState } from "preact/hooks";
import { api } from "../api.ts";
import { ActionButton, Card, Empty, ErrorLine, Pill, useData } from "../components.tsx";
import { clock } from "../format.ts";
import type { KeyInfo } from "../types.ts";

/** Limits or budget use as short text (`rpm 60 · tpm 100k`), whatever fields the API reports. */
function describe(x: unknown): string {
  if (x === undefined || x === null) return "–";
  if (Array.isArray(x)) return x.map(describe).join("; ") || "–";
  if (typeof x !== "object") return String(x);
  const parts = Object.entries(x as Record<string, unknown>)
    .filter(([, v]) => v !== undefined && v !== null)
    .map(([k, v]) => `${k} ${typeof v === "object" ? describe(v) : String(v)}`);
  return parts.join(" · ") || "–";
}

function CreateKey({ created }: { created: () => void }) {
  const [name, setName] = useState("");
  const [tag, setTag] = useState("");
  const [admin, setAdmin] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const [secret, setSecret] = useState<{ name: string; secret: string } | undefined>();
  const create = async () => {
    setError(undefined);
    try {
      const r = await api<{ secret: string; key: { name: string } }>("/keys", { method: "POST", body: { name: name.trim(), scopes: admin ? ["admin"] : [], ...(tag.trim() ? { tag: tag.trim() } : {}) } });
      setSecret({ name: r.key?.name ?? name.trim(), secret: r.secret });
      setName("");
      setTag("");
      setAdmin(false);
      created();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return (
    <Card title="Create a key">
      {secret && (
        <div class="secret-once" data-secret-for={secret.name}>
          <strong>Key {secret.name} created.</strong> Copy it now: it is shown this once and cannot be read again.
          <code class="secret-value">{secret.secret}</code>
          <div class="form-row">
            <button type="button" class="btn btn-small" onClick={() => void navigator.clipboard?.writeText(secret.secret)}>
              Copy
            </button>
            <button type="button" class="btn btn-small" onClick={() => setSecret(undefined)}>
              Done, hide it
            </button>
          </div>
        </div>
      )}
      <form
        class="form-row"
        onSubmit={(e) => {
          e.preventDefault();
          void create();
        }}
      >
        <div class="field">
          <label for="key-name">Name</label>
          <input id="key-name" name="name" value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} placeholder="laptop" required />
        </div>
        <div class="field">
          <label for="key-tag">Tag (routing predicates)</label>
          <input id="key-tag" name="tag" value={tag} onInput={(e) => setTag((e.target as HTMLInputElement).value)} placeholder="optional" />
        </div>
        <label class="check">
          <input type="checkbox" name="admin" checked={admin} onChange={(e) => setAdmin((e.target as HTMLInputElement).checked)} /> admin scope
        </label>
        <button class="btn btn-primary" type="submit" disabled={name.trim() === ""}>
          Create key
        </button>
      </form>
      <ErrorLine error={error} />
      <p class="muted small">
        Per-key limits and budgets (requests and tokens per minute, concurrency, budgets, allowed models) come from the config file's <code>keys[].limits</code> or <code>switchyard keys create</code>; their use shows in the table below.
      </p>
    </Card>
  );
}

function RevokeButton({ name, done }: { name: string; done: () => void }) {
  const [confirm, setConfirm] = useState(false);
  const [error, setError] = useState<string | undefined>();
  if (!confirm)
    return (
      <button type="button" class="btn btn-small btn-danger" onClick={() => setConfirm(true)}>
        Revoke
      </button>
    );
  return (
    <span class="form-row">
      <ActionButton
        small
        tone="danger"
        onClick={async () => {
          try {
            await api(`/keys/${encodeURIComponent(name)}`, { method: "DELETE" });
            done();
          } catch (e) {
            setError((e as Error).message);
          }
        }}
      >
        Confirm revoke
      </ActionButton>
      <button type="button" class="btn btn-small" onClick={() => setConfirm(false)}>
        Cancel
      </button>
      {error && <span class="held-text small">{error}</span>}
    </span>
  );
}

export function KeysPage() {
  const keys = useData(() => api<{ keys: KeyInfo[] }>("/keys"));
  const list = keys.data?.keys ?? [];
  return (
    <div class="page">
      <header class="page-head">
        <div>
          <h1>Keys</h1>
          <p class="muted">Client keys callers present as Authorization: Bearer or x-api-key. Secrets are stored hashed and never shown again.</p>
        </div>
      </header>
      <CreateKey created={keys.reload} />
      <ErrorLine error={keys.error} />
      <Card title="Keys">
        {keys.data && list.length === 0 && (
          <Empty title="No keys yet">
            <p>While no key exists and server.require_api_key is off, callers on this machine need none. Create one here for remote callers or to tell callers apart in Usage.</p>
          </Empty>
        )}
        {list.length > 0 && (
          <div class="table-wrap">
            <table class="keys">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Scopes</th>
                  <th>Tag</th>
                  <th>Source</th>
                  <th>Created</th>
                  <th>Limits</th>
                  <th>Budget use</th>
                  <th>State</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {list.map((k) => (
                  <tr key={k.name} data-key={k.name}>
                    <td class="mono">
                      {k.name}
                      {k.prefix && <span class="muted"> {k.prefix}…</span>}
                    </td>
                    <td>{k.scopes.length ? k.scopes.join(", ") : <span class="muted">client</span>}</td>
                    <td>{k.tag ?? "–"}</td>
                    <td>{k.source === "config" ? "config file" : "database"}</td>
                    <td>{k.createdAt ? clock(k.createdAt) : "–"}</td>
                    <td class="small">{describe(k.limits)}</td>
                    <td class="small">{describe(k.budget)}</td>
                    <td>{k.revokedAt ? <Pill tone="off">revoked {clock(k.revokedAt)}</Pill> : <Pill tone="ok">active</Pill>}</td>
                    <td>{k.source === "db" && !k.revokedAt ? <RevokeButton name={k.name} done={keys.reload} /> : null}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Card>
    </div>
  );
}
