(* The rest of the Rig module's surface over this machine's devices:
   host_of, capability, and Rig_remote's jobs over the host and memory
   devices (test_jobs.ml runs them over another machine). *)
open Check

let host_of () =
  check "host_of host" (Rig.host_of Rig.host == Rig.host);
  let m = Result.get_ok (Rig.memory_device "surface-a") in
  check "host_of a memory device" (Rig.host_of m == Rig.host);
  Rig.close m;
  check "host_of a closed device" (Rig.host_of m == Rig.host)

let capability () =
  check "the host declares no record" (Rig.capability Rig.host (Rig_edge.c_record "no.such") = None);
  let m = Result.get_ok (Rig.memory_device "surface-b") in
  check "a memory device declares none" (Rig.capability m (Rig_edge.c_record "remote.machine") = None);
  let read_called = ref false in
  let k = Rig_edge.capability "remote.machine" (fun _ -> read_called := true) in
  check "read only for a record" (Rig.capability m k = None && not !read_called);
  check "the key" (k.Rig_edge.key = "remote.machine")

(* Four floats of a buffer. *)
let floats b =
  let s = Bytes.create 16 in
  Rig.Buffer.blit_to_bytes b 0 s 0 16;
  List.init 4 (fun i -> Int32.float_of_bits (Bytes.get_int32_le s (4 * i)))

let host_floats f =
  let b = Rig.Buffer.create Rig.host 16 and s = Bytes.create 16 in
  for i = 0 to 3 do Bytes.set_int32_le s (4 * i) (Int32.bits_of_float (f i)) done;
  Rig.Buffer.blit_from_bytes s 0 b 0 16;
  b

(* The seed's add kernel over 4 floats, whose setup sets its grid and n. *)
let adder () =
  let image = Result.get_ok (Rig.Image.load Rig.host (In_channel_compat.read_file "kernel_add.o")) in
  let add = Option.get (Rig.Image.resolve image "add") in
  let open Rig.Submission in
  let s = make Rig.host [| launch ~refs:[| read 0 ~at:0; read 1 ~at:8; write 2 ~at:16 |] add ~params:32 |] in
  let setups = ref 0 in
  let setup run =
    incr setups;
    let k = block s 0 in
    Run.groups run k 1 1 1;
    Run.threads run k 4 1 1;
    Run.int64 run k 24 4L
  in
  (s, setup, setups)

(* A job over a memory device and the host: a fill there, its copy here,
   then a launch here over it, set up by the step's setup. *)
let job_runs () =
  let m = Result.get_ok (Rig.memory_device "surface-job") in
  let a = Rig.Buffer.create m 16 in
  let fill = Rig.Submission.(make m [| fill ~size:4 0 (Int32.to_int (Int32.bits_of_float 2.)) |]) in
  let x = host_floats (fun _ -> 0.) and y = host_floats float_of_int and z = host_floats (fun _ -> 0.) in
  let s, setup, setups = adder () in
  let j = Rig_remote.make () in
  check "no steps" (Rig_remote.steps j = 0);
  let s0 = Rig_remote.add j fill [| a |] in
  let s1 = Rig_remote.add_copy j ~src:a ~dst:x in
  let s2 = Rig_remote.add ~setup j s [| x; y; z |] in
  check "steps count from 0" (s0 = 0 && s1 = 1 && s2 = 2 && Rig_remote.steps j = 3);
  check "pending before the run" (Rig_remote.step j 2 = Rig_remote.Pending);
  raises "a step out of range" invalid (fun () -> Rig_remote.step j 3);
  raises "a wrong count of buffers" invalid (fun () -> Rig_remote.add j s [| x |]);
  check "the run" (Rig_remote.run j = Ok ());
  check "the setup ran once" (!setups = 1);
  check "z = 2 + i" (floats z = [ 2.; 3.; 4.; 5. ]);
  let reached i = match Rig_remote.step j i with Rig_remote.Reached (Some p) -> Rig.Point.reached p | _ -> false in
  check "every step reached, with its point" (reached 0 && reached 1 && reached 2);
  (match Rig_remote.step j 0 with
  | Rig_remote.Reached (Some p) -> check "the fill's point is the memory device's" (Rig.Point.device p = Some m)
  | _ -> check "the fill's point" false);
  check "a run again runs nothing new" (Rig_remote.run j = Ok () && !setups = 1);
  Rig.close m

(* A setup that raises stops the run there, its exception raised again; a
   later run goes on from that step. *)
let setup_raises () =
  let x = host_floats float_of_int and y = host_floats float_of_int and z = host_floats (fun _ -> 0.) in
  let s, setup, setups = adder () in
  let first = ref true in
  let j = Rig_remote.make () in
  let s0 = Rig_remote.add ~setup j s [| x; y; z |] in
  let s1 =
    Rig_remote.add j s [| x; y; z |] ~setup:(fun r ->
        if !first then begin
          first := false;
          failwith "not yet"
        end;
        setup r)
  in
  raises "the setup's exception" (function Failure m -> m = "not yet" | _ -> false) (fun () -> Rig_remote.run j);
  (* Steps are submitted first, then waited for: step 0 was submitted (a
     host launch is done then) but its wait never came. *)
  check "the step before it ran" (floats z = [ 0.; 2.; 4.; 6. ] && Rig_remote.step j s0 = Rig_remote.Pending);
  check "its step did not" (Rig_remote.step j s1 = Rig_remote.Pending);
  check "a later run goes on" (Rig_remote.run j = Ok () && !setups = 2);
  check "both reached" (List.for_all (fun i -> match Rig_remote.step j i with Rig_remote.Reached _ -> true | _ -> false) [ s0; s1 ])

(* A step over a device lost before the run is lost and not submitted, and
   so is a step that reads what it writes; the others run. *)
let lost_device () =
  let m = Result.get_ok (Rig.memory_device "surface-lost") in
  let a = Rig.Buffer.create m 16 in
  let fill = Rig.Submission.(make m [| fill 0 7 |]) in
  let other = Result.get_ok (Rig.memory_device "surface-other") in
  let h = Rig.Buffer.create Rig.host 16 and b = Rig.Buffer.create other 16 in
  let j = Rig_remote.make () in
  let s0 = Rig_remote.add j fill [| a |] in
  let s1 = Rig_remote.add_copy j ~src:a ~dst:h in
  let s2 = Rig_remote.add j Rig.Submission.(make other [| fill 0 9 |]) [| b |] in
  Rig.close m;
  (match Rig_remote.run j with
  | Error lost -> check "the lost steps" (List.map fst lost = [ s0; s1 ])
  | Ok () -> check "the lost steps" false);
  (match Rig_remote.step j s0 with
  | Rig_remote.Lost why -> check "why names the loss" (why <> "")
  | _ -> check "step 0 lost" false);
  check "the other step ran" (match Rig_remote.step j s2 with Rig_remote.Reached _ -> true | _ -> false);
  let out = Bytes.create 1 in
  Rig.Buffer.blit_to_bytes b 0 out 0 1;
  check "its result" (Bytes.get out 0 = '\009');
  Rig.close other

(* Submission.make ~keep: the value lives while the submission does, and
   goes once it is collected and a call moved the device's memory. *)
let keep () =
  let m = Result.get_ok (Rig.memory_device "surface-keep") in
  let b = Rig.Buffer.create m 4 in
  let gone = ref false in
  let make () =
    let v = ref 0 in
    Gc.finalise (fun _ -> gone := true) v;
    Rig.Submission.(make ~keep:v m [| fill 0 1 |])
  in
  let s = (Sys.opaque_identity make) () in
  ignore (Rig.submit (Rig.Submission.take s) ~buffers:[| b |]);
  Gc.full_major ();
  check "kept while the submission lives" (not !gone);
  ignore (Sys.opaque_identity s);
  let rec collect n =
    Gc.full_major ();
    Rig.free_cache m;
    if not !gone && n > 0 then collect (n - 1)
  in
  collect 5;
  check "let go once it is collected" !gone;
  Rig.close m

let access () =
  let b = Rig.Buffer.create Rig.host 4 in
  check "Rig.access is Buffer.access" (Rig.Buffer.access b = Rig.Read_write);
  check "a Read view" (Rig.Buffer.access (Rig.Buffer.view ~access:Rig.Read b) = Rig.Buffer.Read)

let () =
  access ();
  keep ();
  host_of ();
  capability ();
  job_runs ();
  setup_raises ();
  lost_device ();
  finish "test_surface"
