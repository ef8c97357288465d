import { APIResource } from 'openai/core/resource';
import { type RolloutScope, runInRolloutScope } from '../../runtime/rollout-context.ts';

/**
 * A view of a client shared by a thread's rollouts, for one rollout: every method called through it — on the client
 * or on any of its resources (`chat.completions.create`, …) — runs in that rollout's scope, so the shared client's
 * recording fetch, which finds its rollout at call time, records the call into the rollout that made the view,
 * wherever the view is used from, as a client made in that rollout would. Writes to it are refused: they would
 * change the client of every rollout of the thread.
 */
export function rolloutView<T extends object>(shared: T, scope: RolloutScope): T {
  const views = new WeakMap<object, object>();
  const methods = new WeakMap<object, Map<PropertyKey, unknown>>();
  const refuse = (_target: object, key: PropertyKey): never => {
    throw new TypeError(
      `cannot set "${String(key)}" on a client of createRecordingClient() without options, which shares its parts with the other rollouts of its thread: pass options to createRecordingClient() for a client of the rollout's own`,
    );
  };
  const methodOf = (target: object, key: PropertyKey, method: (...args: unknown[]) => unknown) => {
    let own = methods.get(target);
    if (!own) methods.set(target, (own = new Map()));
    let wrapped = own.get(key);
    if (!wrapped) own.set(key, (wrapped = (...args: unknown[]) => runInRolloutScope(scope, () => Reflect.apply(method, target, args))));
    return wrapped;
  };
  const handler: ProxyHandler<object> = {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value === 'function' && key !== 'constructor') return methodOf(target, key, value as (...args: unknown[]) => unknown);
      return value instanceof APIResource ? viewOf(value) : value;
    },
    set: refuse,
    defineProperty: refuse,
    deleteProperty: refuse,
  };
  const viewOf = <O extends object>(target: O): O => {
    let view = views.get(target);
    if (!view) views.set(target, (view = new Proxy(target, handler)));
    return view as O;
  };
  return viewOf(shared);
}
