import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { PublicPlugin } from '../../plugins/service.ts';
import type { UpstreamSpec } from '../../runtime/index.ts';
import { createBackendCaches } from './caches.ts';

describe('gateway backend caches', () => {
  function setup(options: { failSpec?: boolean; failList?: boolean } = {}) {
    let now = 0;
    const calls = { list: 0, spec: 0 };
    const failures = { ...options };
    const service = {
      async list() {
        calls.list += 1;
        if (failures.failList) throw new Error('list failed');
        return [{ name: 'alpha' }, { name: 'beta' }] as PublicPlugin[];
      },
      async upstreamSpec(name: string) {
        calls.spec += 1;
        if (failures.failSpec) throw new Error(`no spec for ${name}`);
        return { name, call: calls.spec } as unknown as UpstreamSpec;
      },
    };
    const caches = createBackendCaches(service, 1000, () => now);
    return { caches, calls, failures, advance: (ms: number) => (now += ms) };
  }

  test('a spec is loaded once within the TTL and again after it', async () => {
    const { caches, calls, advance } = setup();
    const first = await caches.specFor('alpha');
    assert.equal(await caches.specFor('alpha'), first);
    assert.equal(calls.spec, 1);
    advance(1000);
    assert.equal(await caches.specFor('alpha'), first, 'still fresh at exactly the TTL');
    advance(1);
    assert.notEqual(await caches.specFor('alpha'), first);
    assert.equal(calls.spec, 2);
  });

  test('the plugin list is loaded once within the TTL, keyed by name', async () => {
    const { caches, calls, advance } = setup();
    const plugins = await caches.plugins();
    assert.deepEqual([...plugins.keys()], ['alpha', 'beta']);
    await caches.plugins();
    assert.equal(calls.list, 1);
    advance(1001);
    await caches.plugins();
    assert.equal(calls.list, 2);
  });

  test('clear forgets specs and the plugin list at once', async () => {
    const { caches, calls } = setup();
    await caches.specFor('alpha');
    await caches.plugins();
    caches.clear();
    await caches.specFor('alpha');
    await caches.plugins();
    assert.deepEqual(calls, { list: 2, spec: 2 });
  });

  test('a failed load is not kept: the next call asks again', async () => {
    const { caches, calls, failures } = setup({ failSpec: true, failList: true });
    await assert.rejects(caches.specFor('alpha'), /no spec for alpha/);
    await assert.rejects(caches.plugins(), /list failed/);
    failures.failSpec = false;
    failures.failList = false;
    assert.equal(((await caches.specFor('alpha')) as unknown as { name: string }).name, 'alpha');
    assert.equal((await caches.plugins()).size, 2);
    assert.deepEqual(calls, { list: 2, spec: 2 });
  });
});
