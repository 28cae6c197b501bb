/** A browserless inbox client for tests: fetch with a cookie jar and no automatic redirects. */
export class Visitor {
  private readonly cookies = new Map<string, string>();
  constructor(
    private readonly base: string,
    private readonly origin: string = base,
  ) {}

  async get(url: string, headers: Record<string, string> = {}): Promise<Response> {
    return this.keep(await fetch(new URL(url, this.base), { redirect: 'manual', headers: { ...headers, cookie: this.cookieHeader() } }));
  }

  /** Fields as pairs when one repeats (checkboxes); `origin` null sends none. */
  async post(url: string, fields: Record<string, string> | [string, string][], origin: string | null = this.origin): Promise<Response> {
    return this.keep(
      await fetch(new URL(url, this.base), {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: this.cookieHeader(), ...(origin ? { origin } : {}) },
        body: new URLSearchParams(fields).toString(),
      }),
    );
  }

  async signIn(id: string, password: string): Promise<Response> {
    const form = await (await this.get('/signin')).text();
    return this.post('/signin', { _csrf: csrfIn(form), next: '/', id, password });
  }

  private keep(res: Response): Response {
    for (const cookie of res.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const eq = pair!.indexOf('=');
      if (/Max-Age=0/.test(cookie)) this.cookies.delete(pair!.slice(0, eq));
      else this.cookies.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
    return res;
  }

  private cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

export function csrfIn(page: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(page);
  if (!match) throw new Error(`no CSRF field in page: ${page.slice(0, 300)}`);
  return match[1]!;
}
