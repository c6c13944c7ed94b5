import json
import pkgutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import jaxmarl
from jaxmarl import registry
from tests.toy_envs import CounterEnv


def test_unknown_id_names_close_matches():
    with pytest.raises(ValueError) as err:
        jaxmarl.make("MPE_simple_sprad_v3")
    message = str(err.value)
    assert "'MPE_simple_sprad_v3'" in message and "MPE_simple_spread_v3" in message


def test_a_family_explains_an_unknown_id_that_looks_like_its_own():
    # MABrax's hook (register_family's unknown_id_hint) lists MaMuJoCo's factorisations. It is
    # imported only on the error path, and it loads neither the env module nor brax.
    out = _fresh_process(
        _LOADED
        + """
    import jaxmarl
    ids = list(jaxmarl.registered_envs)
    before = loaded("jaxmarl.envs.mabrax")
    messages = []
    for env_id in ("ant_3x3", "ant_2x4", "spider_4x2"):
        try:
            jaxmarl.make(env_id)
        except ValueError as error:
            messages.append(str(error))
    print(json.dumps({
        "before": before,
        "after": loaded("jaxmarl.envs.mabrax"),
        "brax": loaded("brax"),
        "messages": messages,
    }))
    """
    )
    assert out["before"] == ["jaxmarl.envs.mabrax"]
    assert out["after"] == ["jaxmarl.envs.mabrax", "jaxmarl.envs.mabrax.factorisation"]
    assert out["brax"] == []
    ant_3x3, ant_2x4, spider = out["messages"]
    assert "unknown environment id 'ant_3x3'" in ant_3x3
    assert "not a known MaMuJoCo factorisation of ant; known: ant: ant_2x4, ant_2x4d" in ant_3x3
    assert "walker2d: walker2d_2x3" in ant_3x3
    assert "MABraxEnv('ant_2x4')" in ant_2x4
    assert "MaMuJoCo" not in spider  # not a robot of the family: no sentence added


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


# JaxMARL 0.2.0's registered ids (its ``jaxmarl.registered_envs``): every built-in id must be
# one of them, spelt the same, so that code written for JaxMARL finds its envs here.
JAXMARL_IDS = {
    *(f"MPE_simple{s}_v3" for s in ("", "_tag", "_world_comm", "_spread", "_crypto", "_push")),
    *(f"MPE_simple{s}_v3" for s in ("_adversary", "_reference")),
    "MPE_simple_speaker_listener_v4",
    *(f"MPE_simple_facmac{s}_v1" for s in ("", "_3a", "_6a", "_9a")),
    "switch_riddle", "SMAX", "HeuristicEnemySMAX", "LearnedPolicyEnemySMAX",
    "ant_4x2", "halfcheetah_6x1", "hopper_3x1", "humanoid_9|8", "walker2d_2x3",
    "storm", "storm_2p", "storm_np", "hanabi", "overcooked", "overcooked_v2", "coin_game",
    "jaxnav",
    *(f"JaxRobotarium_{s}" for s in (
        "navigation", "discovery", "material_transport", "warehouse", "arctic_transport",
        "foraging", "rware", "predator_prey",
    )),
}  # fmt: skip
# The ids of the families that exist, in registration order (pinned: dropping or renaming one
# fails; a new family needs no entry here, but every id it registers must be a JaxMARL id).
FAMILY_IDS = {
    "mpe": [
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
    ],
    "smax": ["SMAX", "HeuristicEnemySMAX", "LearnedPolicyEnemySMAX"],
    "coin_game": ["coin_game"],
    "switch_riddle": ["switch_riddle"],
}


def _families() -> list[str]:
    """The env family packages under ``jaxmarl.envs`` (what the registry discovers)."""
    import jaxmarl.envs

    return sorted(m.name for m in pkgutil.iter_modules(jaxmarl.envs.__path__) if m.ispkg)


def _family_of(env_id: str) -> str:
    return jaxmarl.spec(env_id).entry_point.split(":")[0].split(".")[2]


def _builtin_ids() -> list[str]:
    """The ids the families register, family by family in discovery order."""
    families = _families()
    builtin = [i for i in jaxmarl.registered_envs if _family_of(i) in families]
    return sorted(builtin, key=lambda i: families.index(_family_of(i)))


def test_builtin_ids_are_jaxmarl_ids():
    builtin = _builtin_ids()
    assert set(builtin) <= JAXMARL_IDS, sorted(set(builtin) - JAXMARL_IDS)
    for family, ids in FAMILY_IDS.items():
        assert [i for i in builtin if _family_of(i) == family] == ids, family
    assert jaxmarl.spec("SMAX").entry_point == "jaxmarl.envs.smax.smax_env:SMAX"


def _fresh_process(code: str, cwd=None) -> dict:
    """Run ``code`` in a new interpreter; it prints one JSON line, returned here."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=cwd,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


_LOADED = """
    import json, sys
    def loaded(prefix):
        return sorted(m for m in sys.modules if m == prefix or m.startswith(prefix + "."))
"""


def test_import_jaxmarl_loads_no_env_family():
    out = _fresh_process(
        _LOADED
        + """
    import jaxmarl
    before = loaded("jaxmarl.envs")
    ids = list(jaxmarl.registered_envs)
    print(json.dumps({"before": before, "after": loaded("jaxmarl.envs"), "ids": ids}))
    """
    )
    assert out["before"] == []
    # Consulting the registry loads the families' package __init__s, and none of their modules.
    assert out["after"] == ["jaxmarl.envs"] + [f"jaxmarl.envs.{f}" for f in _families()]
    assert out["ids"] == _builtin_ids()


@pytest.mark.parametrize(("family", "other"), [("mpe", "smax"), ("smax", "mpe")])
def test_importing_one_family_loads_nothing_of_another(family, other):
    out = _fresh_process(
        _LOADED
        + f"""
    import jaxmarl.envs.{family}
    from jaxmarl import registry
    print(json.dumps({{
        "own": loaded("jaxmarl.envs.{family}"),
        "other": loaded("jaxmarl.envs.{other}"),
        "ids": list(registry._REGISTRY),
    }}))
    """
    )
    assert out["own"] == [f"jaxmarl.envs.{family}"]  # its env modules load on first use
    assert out["other"] == []
    assert out["ids"] == FAMILY_IDS[family]


def test_public_names_of_a_family_load_on_first_use():
    out = _fresh_process(
        _LOADED
        + """
    from jaxmarl.envs.mpe import SimpleSpreadMPE
    import jaxmarl.envs.mpe as mpe
    env_modules = loaded("jaxmarl.envs.mpe")
    print(json.dumps({
        "modules": env_modules,
        "class": SimpleSpreadMPE.__module__,
        "submodule": mpe.simple_tag.__name__,
        "all_resolve": all(hasattr(mpe, name) for name in mpe.__all__),
        "missing": hasattr(mpe, "NotAName"),
    }))
    """
    )
    assert "jaxmarl.envs.mpe.simple_spread" in out["modules"]
    assert "jaxmarl.envs.mpe.simple_tag" not in out["modules"]  # loaded later, by name
    assert out["class"] == "jaxmarl.envs.mpe.simple_spread"
    assert out["submodule"] == "jaxmarl.envs.mpe.simple_tag"
    assert out["all_resolve"] and not out["missing"]


def test_register_refuses_a_builtin_id_before_any_lookup():
    out = _fresh_process(
        """
    import json, jaxmarl
    try:
        jaxmarl.register("MPE_simple_v3", "tests.toy_envs:CounterEnv")
        message = None
    except ValueError as error:
        message = str(error)
    print(json.dumps({"message": message}))
    """
    )
    assert "already registered" in out["message"]


def test_a_new_family_package_is_found_without_a_central_list(tmp_path):
    # A family is a subpackage of jaxmarl.envs whose __init__ calls register_family; adding one
    # needs no edit anywhere else. Here the package lives in a folder added to the path of
    # jaxmarl.envs, as a new folder envs/<family>/ would be.
    family = tmp_path / "toyfamily"
    family.mkdir()
    (family / "__init__.py").write_text(
        "from jaxmarl.registry import register_family\n"
        "register_family(__name__, {'ToyCounter-v0': 'counter:CounterEnv'})\n"
    )
    (family / "counter.py").write_text("from tests.toy_envs import CounterEnv  # noqa: F401\n")
    out = _fresh_process(
        _LOADED
        + f"""
    import jaxmarl, jaxmarl.envs
    jaxmarl.envs.__path__.append({str(tmp_path)!r})
    env = jaxmarl.make("ToyCounter-v0", target=3)
    print(json.dumps({{
        "ids": jaxmarl.registered_envs,
        "target": env.target,
        "toy": loaded("jaxmarl.envs.toyfamily"),
    }}))
    """,
        cwd=Path(__file__).resolve().parents[1],
    )
    assert out["ids"] == [*_builtin_ids(), "ToyCounter-v0"]
    assert out["target"] == 3
    assert out["toy"] == ["jaxmarl.envs.toyfamily", "jaxmarl.envs.toyfamily.counter"]
