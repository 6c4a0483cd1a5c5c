(* Rig.Profile over rig_profile_*: a profile times the host's launches
   (the seed's add kernel), its records name them, a memory device's
   copies are timed by nobody, and the trace is Chrome's. *)
open Check

let add_submission () =
  let obj = In_channel_compat.read_file "kernel_add.o" in
  let image = Result.get_ok (Rig.Image.load Rig.host obj) in
  let add = Option.get (Rig.Image.resolve image "add") in
  let open Rig.Submission in
  let s = make Rig.host [| launch ~refs:[| read 0 ~at:0; read 1 ~at:8; write 2 ~at:16 |] add ~params:32 |] in
  let n = 256 in
  let buffers = Array.init 3 (fun _ -> Rig.Buffer.create Rig.host (4 * n)) in
  fun () ->
    let run = take s and k = block s 0 in
    Run.groups run k 4 1 1;
    Run.threads run k 64 1 1;
    Run.int64 run k 24 (Int64.of_int n);
    Rig.submit run ~buffers

let () =
  let submit = add_submission () in
  raises "a negative count of records" invalid (fun () -> Rig.Profile.start ~records:(-1) ());
  check "no profile at first" (not (Rig.Profile.active ()));
  Rig.Profile.start ~records:64 ();
  check "active once started" (Rig.Profile.active ());
  let points = List.init 3 (fun _ -> submit ()) in
  let m = Result.get_ok (Rig.memory_device "profile-m") in
  let a = Rig.Buffer.create m 64 and b = Rig.Buffer.create m 64 in
  Rig.Buffer.copy ~src:a ~dst:b;
  let p = Rig.Profile.take () in
  let records = Array.to_list (Rig.Profile.records p) in
  let launches = List.filter (fun r -> r.Rig.Profile.kind = Rig.Profile.Launch) records in
  check "a record per launch" (List.length launches = 3);
  check "each names the host and the function"
    (List.for_all (fun r -> r.Rig.Profile.device = "CPU" && r.Rig.Profile.name = "add" && r.Rig.Profile.part = 0)
       launches);
  check "each at its submit's point"
    (List.sort compare (List.map (fun r -> (r.Rig.Profile.point :> int)) launches)
    = List.sort compare (List.map (fun (p : Rig.Point.t) -> (p :> int)) points));
  check "times in order" (List.for_all (fun r -> r.Rig.Profile.start_ns <= r.Rig.Profile.end_ns) records);
  check "sorted by start"
    (let starts = List.map (fun r -> r.Rig.Profile.start_ns) records in
     starts = List.sort compare starts);
  check "a memory device times nothing" (List.for_all (fun r -> r.Rig.Profile.device <> "memory:profile-m") records);
  check "nothing dropped" (Rig.Profile.dropped p = 0);
  check "a second take has nothing new" (Rig.Profile.records (Rig.Profile.take ()) = [||]);
  let trace = Rig.Profile.chrome p in
  let has s sub =
    let n = String.length sub in
    let rec at i = i + n <= String.length s && (String.sub s i n = sub || at (i + 1)) in
    at 0
  in
  check "the trace is Chrome's" (has trace "traceEvents" && has trace "\"add\"");
  let file = Filename.temp_file "rig-profile" ".json" in
  Rig.Profile.save_chrome p file;
  check "saved as written" (In_channel_compat.read_file file = trace);
  Sys.remove file;
  raises "a file that cannot be written"
    (function Sys_error _ -> true | _ -> false)
    (fun () -> Rig.Profile.save_chrome p "/nonexistent-dir/profile.json");
  Rig.Profile.stop ();
  check "stopped" (not (Rig.Profile.active ()));
  ignore (submit ());
  check "no record once stopped" (Rig.Profile.records (Rig.Profile.take ()) = [||]);
  finish "test_profile"
