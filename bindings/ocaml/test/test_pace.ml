(* How buffers pace the collector (src/rig_ml_pace.c): at least 4 MiB of
   buffers between cycles, a buffer dying young counting an eighth of its
   bytes, so 10,000 dropped buffers of 64 KiB (625 MiB) bring at most 20
   major cycles; caml_alloc_custom_mem's pacing brought one every few
   buffers in a small heap. And a device with a budget collects as it
   nears it: 400 dropped buffers of 64 KiB fit a budget of 1 MiB. *)
open Check

let () =
  let n = 10_000 and bytes = 65536 in
  let majors () = (Gc.quick_stat ()).Gc.major_collections in
  let m0 = majors () in
  for _ = 1 to n do
    ignore (Sys.opaque_identity (Rig.Buffer.create Rig.host bytes))
  done;
  let cycles = majors () - m0 in
  let most = (n * bytes / 8 / (4 lsl 20)) + 2 (* a cycle under way, and the next *) in
  if cycles > most then Printf.printf "  %d major cycles for %d buffers\n" cycles n;
  check "dropped host buffers bring a cycle per 8 bounds at most" (cycles <= most);
  let d = Result.get_ok (Rig.memory_device "pace") in
  Rig.set_budget d (1 lsl 20);
  for _ = 1 to 400 do
    ignore (Sys.opaque_identity (Rig.Buffer.create d bytes))
  done;
  check "a budget's room paces the collector" (Rig.allocated d <= 1 lsl 20);
  finish "test_pace"
