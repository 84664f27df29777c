import { Module, type DynamicModule } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { declaredProvider, decorateProvider } from './decorate-provider';

const GREETING = Symbol('GREETING');
const NAME = Symbol('NAME');

@Module({ providers: [{ provide: NAME, useValue: 'orders' }], exports: [NAME] })
class NameModule {}

/** An app module shaped like the chain's: a dynamic root importing a dynamic module that holds the provider. */
function appModule(): DynamicModule {
  const feature: DynamicModule = {
    module: class FeatureModule {},
    imports: [NameModule],
    providers: [{ provide: GREETING, inject: [NAME], useFactory: (name: string) => `hello ${name}` }],
    exports: [GREETING],
  };
  return { module: class AppModule {}, imports: [feature] };
}

describe('decorateProvider', () => {
  it("wraps the app's own factory, with its own dependencies and the lab's", async () => {
    const root = appModule();
    const builder = Test.createTestingModule({ imports: [root] });
    decorateProvider(builder, root, GREETING, (greeting: string, name: string) => `${greeting}, from the lab (${name})`, [NAME]);
    const moduleRef = await builder.compile();
    expect(moduleRef.get(GREETING, { strict: false })).toBe('hello orders, from the lab (orders)');
  });

  it('finds providers in imported modules, by their decorator metadata too, and refuses what it cannot wrap', () => {
    const root = appModule();
    expect(declaredProvider(root, NAME)).toEqual({ provide: NAME, useValue: 'orders' });
    expect(declaredProvider(root, Symbol('absent'))).toBeUndefined();
    const withClass: DynamicModule = { module: class ClassModule {}, providers: [NameModule] };
    expect(() => decorateProvider(Test.createTestingModule({ imports: [withClass] }), withClass, NameModule, (value) => value)).toThrow(
      'The lab can only decorate a factory or value provider',
    );
  });
});
