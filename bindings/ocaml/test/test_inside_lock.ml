(* A call that may take a lock, made inside a lock, raises Invalid_argument
   having done nothing: a finaliser that the collector hook's collection
   runs (inside reclamation's lock) calls Buffer.create. A call that takes
   no lock (name, Point.reached) answers there. *)
open Check

let kib = 1024
let seen = ref []

let plant d =
  let trigger = ref 0 in
  Gc.finalise
    (fun _ ->
      let no_lock = Rig.name d in
      let r = match Rig.Buffer.create d 16 with _ -> "created" | exception Invalid_argument _ -> "Invalid_argument" in
      seen := (no_lock, r) :: !seen)
    trigger;
  ignore (Sys.opaque_identity trigger)

let () =
  let d = Result.get_ok (Rig.memory_device "inside-lock") in
  Rig.set_budget d (256 * kib);
  let keep = Rig.Buffer.create d (128 * kib) in
  (* Garbage that only a collection returns, and a finaliser with it. *)
  ignore (Sys.opaque_identity (Rig.Buffer.create d (128 * kib)));
  Gc.full_major ();
  (* Drop the finalised one's trigger; a fresh buffer is unreachable now. *)
  ignore (Sys.opaque_identity (Rig.Buffer.create d (128 * kib)));
  plant d;
  let b = Rig.Buffer.create d (128 * kib) in (* reclaims: the hook collects *)
  check "the finaliser ran inside the collector hook" (!seen <> []);
  List.iter
    (fun (name, r) ->
      check "a lock-free call answers inside a lock" (name = Rig.name d);
      check "Buffer.create inside a lock is Invalid_argument" (r = "Invalid_argument"))
    !seen;
  ignore (Sys.opaque_identity (keep, b));
  finish "test_inside_lock"
