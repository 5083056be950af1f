"""Go compatibility: where ccm must produce exactly what upstream's Go produces.

* ``ccm.gocompat.fmt`` -- ``fmt.Sprint``/``%v``, ``Sprintf``, ``Sprintln``, Go's float text,
  map-key order and type names;
* ``ccm.gocompat.strconv`` -- string-literal escapes and ``%q`` quoting;
* ``ccm.gocompat.json`` -- ``encoding/json`` text;
* ``ccm.gocompat.time`` -- ``time.Time`` with Go reference-time layouts.

Standard library only, and nothing else of ccm's (``tests/test_architecture.py``), so the
expression language and both template engines can share it.
"""
