from conftest import REPO

from feedstock import demo


def test_demo_trains_an_accurate_classifier_on_the_shipped_digits(tmp_path, capsys):
    acc = demo.main(["--data", str(REPO / "data" / "digits.csv.gz"), "--out-dir", str(tmp_path), "--epochs", "5"])
    out = capsys.readouterr().out
    assert acc > 0.85
    assert "trained on 7185 examples (5 epochs)" in out  # 1437 training digits x 5, none lost
    assert "on 360 held-out digits" in out
