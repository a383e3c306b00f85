"""A core block's attribute values end where the sentence's next clause starts (issue 31)."""

from __future__ import annotations

from memrepo.write.offline import core_attributes


def test_a_coordinated_clause_with_its_own_subject_ends_the_value():
    got = dict(core_attributes("I live in Galway and I am allergic to shellfish."))
    assert got["lives in"] == "Galway" and got["allergic to"] == "shellfish"
    assert dict(core_attributes("I work as a welder and my wife works nights."))["works as"] == "a welder"


def test_a_name_with_and_in_it_stays_whole():
    assert dict(core_attributes("I live in Antigua and Barbuda."))["lives in"] == "Antigua and Barbuda"
    assert dict(core_attributes("I speak Dutch and Danish."))["speaks"] == "Dutch and Danish"


def test_every_stated_attribute_is_kept():
    keys = [k for k, _v in core_attributes("My name is Ilse and I am vegan. I'm 34 years old.")]
    assert keys == ["name", "diet", "age"]
