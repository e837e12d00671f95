/**
 * What each subject's records weigh, in bytes, and in which order they were written: for a store
 * bounded per subject as well as in total, so one subject filling it evicts its own oldest records
 * and never another subject's. Only bookkeeping: the store owns the records and drops what
 * `overBy` names.
 */
export class SubjectShares {
  readonly #maxBytes: number;
  /** Per subject: its records' ids, oldest first, with their bytes; and their sum. */
  readonly #subjects = new Map<string, { bytes: number; readonly ids: Map<string, number> }>();

  constructor(maxBytesPerSubject: number) {
    this.#maxBytes = maxBytesPerSubject;
  }

  /** Bytes the subject's records weigh now. */
  bytesOf(subject: string): number {
    return this.#subjects.get(subject)?.bytes ?? 0;
  }

  /** Record `id` of `subject` was written (again) with this weight: it is now the subject's newest. */
  wrote(subject: string, id: string, bytes: number): void {
    let share = this.#subjects.get(subject);
    if (share === undefined) this.#subjects.set(subject, (share = { bytes: 0, ids: new Map() }));
    share.bytes += bytes - (share.ids.get(id) ?? 0);
    share.ids.delete(id);
    share.ids.set(id, bytes);
  }

  /** Record `id` of `subject` is gone (evicted, expired, deleted). */
  dropped(subject: string, id: string): void {
    const share = this.#subjects.get(subject);
    const bytes = share?.ids.get(id);
    if (share === undefined || bytes === undefined) return;
    share.ids.delete(id);
    share.bytes -= bytes;
    if (share.ids.size === 0) this.#subjects.delete(subject);
  }

  /** The subject's oldest records to drop so it is within its bound again; its newest is never among them. */
  overBy(subject: string): string[] {
    const share = this.#subjects.get(subject);
    if (share === undefined || share.bytes <= this.#maxBytes) return [];
    const out: string[] = [];
    let bytes = share.bytes;
    let left = share.ids.size;
    for (const [id, weight] of share.ids) {
      if (bytes <= this.#maxBytes || left === 1) break;
      out.push(id);
      bytes -= weight;
      left--;
    }
    return out;
  }
}
