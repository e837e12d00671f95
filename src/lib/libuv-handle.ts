import type { Socket } from 'node:net';
import type { WriteStream } from 'node:tty';

/**
 * The two places hypergate reads Node's undocumented `_handle` (libuv's stream wrap), each for
 * something the public API lacks. Kept here, behind one function each, so that
 * test/lib/libuv-handle.test.ts fails the day Node renames or drops what they read.
 */
interface StreamHandle {
  /** Bytes handed to libuv and not yet written to the kernel. */
  readonly writeQueueSize?: number;
  /** Switches the descriptor between blocking and non-blocking writes; 0 on success. */
  setBlocking?(blocking: boolean): number;
}

function handleOf(stream: Socket | WriteStream): StreamHandle | null | undefined {
  return (stream as unknown as { _handle?: StreamHandle | null })._handle;
}

/**
 * Bytes libuv still has to write of the writes handed to it. It goes down as each part of a
 * write reaches the kernel, where socket.writableLength only goes down when a whole write is done
 * (and Node hands a slow socket everything buffered as one write), and socket.bytesWritten counts
 * bytes when they are queued, not sent. Node's own socket time-out reads the same field to count a
 * write in progress as activity (lib/net.js, Socket.prototype._onTimeout). 0 once the socket is closed.
 */
export function unsentBytes(socket: Socket): number {
  return handleOf(socket)?.writeQueueSize ?? 0;
}

/**
 * Makes a terminal's writes non-blocking again: tty.WriteStream makes them blocking
 * (nodejs/node#1771) and offers no way back. True when the switch was made.
 */
export function makeNonBlocking(tty: WriteStream): boolean {
  return handleOf(tty)?.setBlocking?.(false) === 0;
}
