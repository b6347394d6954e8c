/**
 * Whether a `--database` / `server.database` value names PostgreSQL (SPEC D-2). On its own so that the
 * gateway can decide without loading the PostgreSQL store, which it imports only for such a URL.
 */
export function isPostgresUrl(url: string | undefined): url is string {
  return typeof url === "string" && /^postgres(ql)?:\/\//i.test(url);
}
