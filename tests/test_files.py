"""``jaxmarl.files``: the atomic replace that config.yaml, the logs and the plots go through."""

from jaxmarl import files


def test_replace_syncs_the_new_contents_before_renaming_them_over_the_old(tmp_path, monkeypatch):
    target = tmp_path / "config.yaml"
    target.write_text("old")
    seen = []

    def fsync(fd):  # at the sync the target is still the old file, the sibling the new one
        seen.append((target.read_text(), (tmp_path / ".config.yaml.partial").read_bytes()))

    monkeypatch.setattr(files.os, "fsync", fsync)
    files.replace_text(target, "new: 1\n")
    assert seen == [("old", b"new: 1\n")]
    assert target.read_text() == "new: 1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.yaml"]  # no sibling left


def test_replace_bytes_writes_a_new_file(tmp_path):
    files.replace_bytes(tmp_path / "curve.png", b"\x89PNG")
    assert (tmp_path / "curve.png").read_bytes() == b"\x89PNG"
