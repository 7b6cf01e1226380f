// The logger the library writes to: four console-shaped methods, so `console`, a pino or winston
// child with a message-first signature, or a test's recorder can stand in.

/** Fields are a plain object of context (queue, id, job_type, error, ...). */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

function line(level: string, message: string, fields?: Record<string, unknown>): string {
  let text = `dlq ${level}: ${message}`;
  if (fields) {
    for (const [k, v] of Object.entries(fields)) {
      if (v === undefined) continue;
      text += ` ${k}=${typeof v === "string" ? JSON.stringify(v) : v instanceof Error ? JSON.stringify(`${v.name}: ${v.message}`) : JSON.stringify(v)}`;
    }
  }
  return text + "\n";
}

/** The default: warnings and errors to stderr, one line each (like Python's `logging` with no
 * handler configured); pass `logger: console` or your own to see info and debug lines. */
export const defaultLogger: Logger = {
  debug() {},
  info() {},
  warn(message, fields) {
    process.stderr.write(line("warn", message, fields));
  },
  error(message, fields) {
    process.stderr.write(line("error", message, fields));
  },
};

/** A logger that drops everything. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
