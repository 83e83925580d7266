// Concurrent callers asking for the same key share one run of the work.

export class SingleFlight<T> {
  readonly #running = new Map<string, Promise<T>>()

  run(key: string, work: () => Promise<T>): Promise<T> {
    const running = this.#running.get(key)
    if (running) return running
    const started = work().finally(() => this.#running.delete(key))
    this.#running.set(key, started)
    return started
  }
}
