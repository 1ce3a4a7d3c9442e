/** At most `size` tasks at a time; the rest wait their turn, first come first served. */
export class Semaphore {
  private running = 0
  private readonly waiting: Array<() => void> = []

  constructor(readonly size: number) {
    if (!(size >= 1)) throw new RangeError(`a semaphore needs at least one slot; got ${size}`)
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.size) await new Promise<void>((resolve) => this.waiting.push(resolve))
    else this.running += 1
    try {
      return await task()
    } finally {
      const next = this.waiting.shift()
      if (next) next()
      else this.running -= 1
    }
  }
}
