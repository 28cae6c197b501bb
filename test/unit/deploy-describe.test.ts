/**
 * How `deploy` reads a deployment: the server answers NOT_FOUND for a deployment that exists while
 * its deployment workflow is busy, so a NOT_FOUND is asked again before the deployment counts as
 * missing. The client here answers as the server did in that moment; nothing else of it is used.
 */
import type { Client } from '@temporalio/client';
import { DeployRefused, describeDeployment } from '../../src/deploy/deployment';

/** A client whose describeWorkerDeployment answers NOT_FOUND `notFound` times, then `answer`. */
function clientAnswering(notFound: number, answer: object = { workerDeploymentInfo: { name: 'd' } }) {
  const calls: string[] = [];
  const client = {
    options: { namespace: 'default' },
    workflowService: {
      describeWorkerDeployment: async ({ deploymentName }: { deploymentName: string }) => {
        calls.push(deploymentName);
        if (calls.length <= notFound) throw Object.assign(new Error(`5 NOT_FOUND: worker deployment not found`), { code: 5 });
        return answer;
      },
    },
  } as unknown as Client;
  return { client, calls };
}

test('a NOT_FOUND followed by the deployment is the deployment: the answer after the retries', async () => {
  const { client, calls } = clientAnswering(2);
  await expect(describeDeployment(client, 'd')).resolves.toEqual({ workerDeploymentInfo: { name: 'd' } });
  expect(calls).toEqual(['d', 'd', 'd']);
});

test('a deployment NOT_FOUND on every ask is refused by name, after four asks', async () => {
  const { client, calls } = clientAnswering(Number.POSITIVE_INFINITY);
  const refused = await describeDeployment(client, 'no-such').catch((err: unknown) => err);
  expect(refused).toBeInstanceOf(DeployRefused);
  expect((refused as Error).message).toMatch('No Worker Deployment named "no-such"');
  expect(calls).toHaveLength(4);
});

test('another error is not retried', async () => {
  const client = {
    options: { namespace: 'default' },
    workflowService: { describeWorkerDeployment: jest.fn(async () => Promise.reject(Object.assign(new Error('14 UNAVAILABLE'), { code: 14 }))) },
  } as unknown as Client;
  await expect(describeDeployment(client, 'd')).rejects.toThrow('UNAVAILABLE');
  expect(client.workflowService.describeWorkerDeployment).toHaveBeenCalledTimes(1);
});
