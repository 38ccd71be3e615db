/**
 * A byte transport between the driver and a reader. The driver calls `open` at connect and at every reconnect, so a
 * transport holds configuration only; each open returns a fresh connection.
 */

/** Callbacks of one open connection. */
export interface TransportEvents {
  /** Bytes from the reader, in order; chunk boundaries carry no meaning. */
  data(chunk: Uint8Array): void;
  /**
   * The connection ended without `close()` being called (device unplugged, port error). Called at most once per
   * connection, never after `close()`.
   */
  closed(error: Error | undefined): void;
}

export interface TransportConnection {
  /**
   * Sends bytes. Resolves once the bytes were handed to the OS / device. Rejects with ReaderError
   * READER_DISCONNECTED when the connection is gone. The driver never overlaps writes.
   */
  write(bytes: Uint8Array): Promise<void>;
  /** Closes the connection; no event fires afterwards. Never rejects. */
  close(): Promise<void>;
}

export interface Transport {
  /** For logs and `reader test`: e.g. "serial /dev/ttyUSB0 @115200", "hid 0ACD:3410". */
  readonly description: string;
  /** Opens a connection. Rejects with ReaderError READER_UNAVAILABLE when the device cannot be opened. */
  open(events: TransportEvents): Promise<TransportConnection>;
  /** Releases what the transport holds beyond connections (a helper process); called once by the driver's close. */
  dispose?(): Promise<void>;
}
