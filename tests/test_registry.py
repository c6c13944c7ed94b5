import pytest

import jaxmarl
from jaxmarl import registry
from tests.toy_envs import CounterEnv


def test_unknown_id_names_close_matches():
    with pytest.raises(ValueError) as err:
        jaxmarl.make("MPE_simple_sprad_v3")
    message = str(err.value)
    assert "'MPE_simple_sprad_v3'" in message and "MPE_simple_spread_v3" in message


def test_register_make_and_refuse_duplicates():
    env_id = "TestCounter-v0"
    registry.register(env_id, CounterEnv, kwargs={"target": 4}, overwrite=True)
    try:
        assert env_id in jaxmarl.registered_envs
        env = jaxmarl.make(env_id)
        assert isinstance(env, CounterEnv) and env.target == 4
        assert jaxmarl.make(env_id, target=9).target == 9
        with pytest.raises(ValueError, match="already registered"):
            registry.register(env_id, CounterEnv)
        with pytest.raises(TypeError, match="unknown argument 'targt'.*'target'"):
            jaxmarl.make(env_id, targt=3)
    finally:
        registry._REGISTRY.pop(env_id)
        jaxmarl.registered_envs.remove(env_id)


def test_string_entry_point_is_lazy_and_checked():
    spec = registry.EnvSpec("X-v0", "tests.toy_envs:CounterEnv")
    assert spec.load() is CounterEnv
    with pytest.raises(ValueError, match="package.module:ClassName"):
        registry.EnvSpec("Y-v0", "tests.toy_envs.CounterEnv").load()


def test_builtin_ids_are_jaxmarl_ids():
    expected = {
        "MPE_simple_v3",
        "MPE_simple_tag_v3",
        "MPE_simple_world_comm_v3",
        "MPE_simple_spread_v3",
        "MPE_simple_crypto_v3",
        "MPE_simple_speaker_listener_v4",
        "MPE_simple_push_v3",
        "MPE_simple_adversary_v3",
        "MPE_simple_reference_v3",
        "MPE_simple_facmac_v1",
        "MPE_simple_facmac_3a_v1",
        "MPE_simple_facmac_6a_v1",
        "MPE_simple_facmac_9a_v1",
    }
    assert expected <= set(jaxmarl.registered_envs)
