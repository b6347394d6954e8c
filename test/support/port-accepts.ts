/** Whether a server still accepts connections: what a test of a stop or a shutdown checks. */

/** Whether a fresh TCP connection to the URL's host and port is accepted (closed again at once). */
export async function accepts(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  try {
    const s = await Bun.connect({ hostname, port: Number(port), socket: { data() {}, error() {} } });
    s.end();
    return true;
  } catch {
    return false;
  }
}
