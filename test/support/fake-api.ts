/** The fake Messages API a file's Claude tests talk to, started in a beforeAll and stopped in an afterAll. */
import { FakeMessagesApi } from '../../src/testing/fake-messages-api';

/** `const api = useFakeApi();` at the top of the file: listening (api.url) from the first test on. */
export function useFakeApi(...options: ConstructorParameters<typeof FakeMessagesApi>): FakeMessagesApi {
  const api = new FakeMessagesApi(...options);
  beforeAll(async () => {
    await api.start();
  });
  afterAll(async () => {
    await api.stop();
  });
  return api;
}
