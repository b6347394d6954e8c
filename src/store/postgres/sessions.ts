/**
 * Dashboard sessions in PostgreSQL (SPEC 9.4, D-2): the `dashboard_sessions` table (migration 10),
 * which every instance on the database reads, so a session any of them issued is valid on all and a
 * sign-out on one ends it on all. Calls need the database (StoreError `unavailable` while it is away:
 * the caller then keeps and checks sessions in its own memory). See `../sessions.ts` (hashes only).
 */
import type { SessionRow, SessionStore } from "../sessions.ts";
import type { PgContext } from "./db.ts";

interface Row {
  token_hash: string;
  subject: string;
  key_hash: string | null;
  created_at: string | number;
  expires_at: string | number;
}

/** The `SessionStore` role of the PostgreSQL store. */
export class PgSessions implements SessionStore {
  constructor(private readonly ctx: PgContext) {}

  async putSession(row: SessionRow, maxOfKind: number): Promise<void> {
    const now = Math.round(row.createdAt);
    const keyless = row.keyHash === null;
    const max = Math.max(1, Math.floor(maxOfKind));
    await this.ctx.change((sql) =>
      sql.begin(async (tx) => {
        await tx`DELETE FROM dashboard_sessions WHERE expires_at <= ${now}`;
        await tx`INSERT INTO dashboard_sessions (token_hash, subject, key_hash, created_at, expires_at)
                 VALUES (${row.tokenHash}, ${row.subject}, ${row.keyHash}, ${Math.round(row.createdAt)}, ${Math.round(row.expiresAt)})
                 ON CONFLICT (token_hash) DO NOTHING`;
        await tx`DELETE FROM dashboard_sessions WHERE token_hash IN (
                   SELECT token_hash FROM dashboard_sessions WHERE (key_hash IS NULL) = ${keyless}
                   ORDER BY created_at DESC, token_hash OFFSET ${max})`;
      }),
    );
  }

  async getSession(tokenHash: string): Promise<SessionRow | undefined> {
    const rows = (await this.ctx.read(
      (sql) => sql`SELECT token_hash, subject, key_hash, created_at, expires_at FROM dashboard_sessions WHERE token_hash = ${tokenHash}`,
    )) as Row[];
    const r = rows[0];
    return r ? { tokenHash: r.token_hash, subject: r.subject, keyHash: r.key_hash, createdAt: Number(r.created_at), expiresAt: Number(r.expires_at) } : undefined;
  }

  async deleteSession(tokenHash: string): Promise<void> {
    await this.ctx.change((sql) => sql`DELETE FROM dashboard_sessions WHERE token_hash = ${tokenHash}`);
  }

  async deleteSessionsOfKeys(keyHashes: string[]): Promise<void> {
    if (keyHashes.length === 0) return;
    await this.ctx.change((sql) => sql`DELETE FROM dashboard_sessions WHERE key_hash IN ${sql(keyHashes.map(String))}`);
  }
}
