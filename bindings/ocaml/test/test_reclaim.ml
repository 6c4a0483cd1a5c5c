(* The memory guide's reclamation example: 100 buffers of 256 KiB in a
   budget of 1 MiB, none kept, then four kept and a fifth refused. The
   buffers let go return because the OCaml collector finalises them: the
   collector hook runs it in reclamation's second round. *)
open Check

let kib = 1024

let () =
  let d = Result.get_ok (Rig.memory_device "reclaim") in
  Rig.set_budget d (1024 * kib);
  let majors = (Gc.quick_stat ()).Gc.major_collections in
  for _ = 1 to 100 do
    ignore (Sys.opaque_identity (Rig.Buffer.create d (256 * kib)))
  done;
  check "100 buffers of 256 KiB allocated, none kept" true;
  check "the OCaml collector ran" ((Gc.quick_stat ()).Gc.major_collections > majors);
  check "within the budget" (Rig.allocated d <= 1024 * kib);
  let live = List.init 4 (fun _ -> Rig.Buffer.create d (256 * kib)) in
  (match Rig.Buffer.create d (256 * kib) with
  | _ -> check "a fifth is refused" false
  | exception Rig.Out_of_memory (d', n) -> check "out of memory: 256 KiB" (d' == d && n = 256 * kib));
  ignore (Sys.opaque_identity live);
  finish "test_reclaim"
