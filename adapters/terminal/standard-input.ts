import { fstatSync } from "node:fs";
import { isatty } from "node:tty";

/**
 * Whether lines can reach the terminal adapter on this descriptor: a keyboard, or a pipe, socket or file that
 * feeds it lines. /dev/null or a closed input (a container started without -i, a systemd unit) would end the
 * conversation before it began, and the bot would exit 0 as if it had run.
 */
export function standardInputUsable(descriptor = 0): boolean {
  if (isatty(descriptor)) return true;
  try {
    const stats = fstatSync(descriptor);
    // Node's child_process "pipe" is a socket pair, a shell's `|` a FIFO, `<` a file.
    return stats.isFIFO() || stats.isSocket() || stats.isFile();
  } catch {
    return false;
  }
}
