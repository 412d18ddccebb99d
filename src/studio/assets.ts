/**
 * The studio's built files (the Vite build of ./app, written to dist/studio/ by `npm run build`),
 * read from disk once each and kept in memory with their gzip form and an entity tag. Node
 * built-ins are imported on first use, so the studio entry loads anywhere and reads files only
 * where there is a file system.
 */

/** One built file, ready to send. */
export interface StudioFile {
  readonly body: Uint8Array;
  /** The gzip form, for clients that accept it; absent for formats that do not shrink (images). */
  readonly gzip?: Uint8Array;
  readonly etag: string;
}

const COMPRESSIBLE = /\.(?:html|js|mjs|css|svg|json|txt|map)$/;

/** Reads the files of one build directory; a name that is not a plain file name is never read. */
export class StudioFiles {
  readonly #dir: Promise<string>;
  readonly #files = new Map<string, Promise<StudioFile | undefined>>();

  constructor(dir?: string) {
    this.#dir = dir === undefined ? packagedDir() : Promise.resolve(dir);
  }

  /** `assets/<name>` or `index.html`; undefined when the file does not exist. */
  get(name: string): Promise<StudioFile | undefined> {
    if (!/^(?:assets\/)?[\w.-]+$/.test(name) || name.includes("..")) return Promise.resolve(undefined);
    let file = this.#files.get(name);
    if (!file) {
      file = this.#load(name);
      this.#files.set(name, file);
      // A failed read (a missing file) is tried again next time: the build may appear later.
      file.then((f) => f ?? this.#files.delete(name), () => this.#files.delete(name));
    }
    return file;
  }

  async #load(name: string): Promise<StudioFile | undefined> {
    const { readFile } = await import("node:fs/promises");
    const { join } = await import("node:path");
    let body: Uint8Array;
    try {
      body = new Uint8Array(await readFile(join(await this.#dir, name)));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT" || (err as NodeJS.ErrnoException).code === "EISDIR") return undefined;
      throw err;
    }
    return prepare(name, body);
  }
}

/** A file's entity tag (a digest of its bytes) and, for text formats, its gzip form. */
export async function prepare(name: string, body: Uint8Array): Promise<StudioFile> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", body as BufferSource));
  const etag = `"${[...digest.subarray(0, 12)].map((b) => b.toString(16).padStart(2, "0")).join("")}"`;
  if (!COMPRESSIBLE.test(name)) return { body, etag };
  const stream = new Blob([body as BlobPart]).stream().pipeThrough(new CompressionStream("gzip"));
  return { body, etag, gzip: new Uint8Array(await new Response(stream).arrayBuffer()) };
}

/**
 * The build shipped with the package: dist/studio/ beside the built module (dist/*.js), or, when
 * running from source (src/studio/assets.ts), the repository's dist/studio/.
 */
async function packagedDir(): Promise<string> {
  const { fileURLToPath } = await import("node:url");
  const { existsSync } = await import("node:fs");
  const here = import.meta.url;
  const candidates = [new URL("./studio/", here), new URL("../../dist/studio/", here)].map((u) => fileURLToPath(u));
  return candidates.find((dir) => existsSync(`${dir}index.html`)) ?? candidates[0]!;
}
