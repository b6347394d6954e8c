/**
 * Log lines gathered and written together (SPEC O-4: one JSON line per request): under load a write
 * per request is a syscall per request. Flushed at the end of the current macrotask burst (setImmediate)
 * or at 64 KiB, and at shutdown.
 */
export class LineBuffer {
  private lines: string[] = [];
  private size = 0;
  private scheduled = false;

  constructor(private readonly write: (text: string) => void) {}

  push(line: string): void {
    this.lines.push(line);
    this.size += line.length + 1;
    if (this.size >= 64 * 1024) return this.flush();
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  flush(): void {
    this.scheduled = false;
    if (this.lines.length === 0) return;
    const text = this.lines.join("\n") + "\n";
    this.lines = [];
    this.size = 0;
    this.write(text);
  }
}
