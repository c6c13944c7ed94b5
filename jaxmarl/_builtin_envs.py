"""Registers the environments that ship with jaxmarl (entry points load on first ``make``)."""

from jaxmarl.registry import register

_MPE = "jaxmarl.envs.mpe"

# JaxMARL's ids, kept verbatim so code written for JaxMARL runs unchanged.
for _env_id, _entry_point in {
    "MPE_simple_v3": f"{_MPE}.simple:SimpleMPE",
    "MPE_simple_tag_v3": f"{_MPE}.simple_tag:SimpleTagMPE",
    "MPE_simple_world_comm_v3": f"{_MPE}.simple_world_comm:SimpleWorldCommMPE",
    "MPE_simple_spread_v3": f"{_MPE}.simple_spread:SimpleSpreadMPE",
    "MPE_simple_crypto_v3": f"{_MPE}.simple_crypto:SimpleCryptoMPE",
    "MPE_simple_speaker_listener_v4": f"{_MPE}.simple_speaker_listener:SimpleSpeakerListenerMPE",
    "MPE_simple_push_v3": f"{_MPE}.simple_push:SimplePushMPE",
    "MPE_simple_adversary_v3": f"{_MPE}.simple_adversary:SimpleAdversaryMPE",
    "MPE_simple_reference_v3": f"{_MPE}.simple_reference:SimpleReferenceMPE",
    "MPE_simple_facmac_v1": f"{_MPE}.simple_facmac:SimpleFacmacMPE",
    "MPE_simple_facmac_3a_v1": f"{_MPE}.simple_facmac:SimpleFacmacMPE3a",
    "MPE_simple_facmac_6a_v1": f"{_MPE}.simple_facmac:SimpleFacmacMPE6a",
    "MPE_simple_facmac_9a_v1": f"{_MPE}.simple_facmac:SimpleFacmacMPE9a",
}.items():
    register(_env_id, _entry_point)

_SMAX = "jaxmarl.envs.smax"
for _env_id, _entry_point in {
    "SMAX": f"{_SMAX}.smax_env:SMAX",
    "HeuristicEnemySMAX": f"{_SMAX}.heuristic_enemy_smax_env:HeuristicEnemySMAX",
    "LearnedPolicyEnemySMAX": f"{_SMAX}.heuristic_enemy_smax_env:LearnedPolicyEnemySMAX",
}.items():
    register(_env_id, _entry_point)
