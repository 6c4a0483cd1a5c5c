(* Other machines: open_host through Rig_edge.remote, open_ ~machine, and
   a machine's close, against a `rig serve` of the build on a loopback port
   (as tests/remote does). Skips, saying why, where RIG_EXE (the build's
   rig, run-tests.sh sets it) or the remote driver is absent. *)
open Check

(* Starts `rig serve --listen 127.0.0.1:0 --key KEY`; its first line says
   the port. *)
let serve exe key =
  let out_r, out_w = Unix.pipe () in
  let log = Unix.openfile (Filename.temp_file "rig-serve" ".log") [ Unix.O_WRONLY ] 0 in
  let pid =
    Unix.create_process exe [| exe; "serve"; "--listen"; "127.0.0.1:0"; "--key"; key |] Unix.stdin out_w log
  in
  Unix.close out_w;
  Unix.close log;
  let ic = Unix.in_channel_of_descr out_r in
  let line = try input_line ic with End_of_file -> "" in
  close_in ic;
  match Scanf.sscanf line "rig serve: listening on %s" Fun.id with
  | address -> (pid, address)
  | exception _ ->
      Unix.kill pid Sys.sigkill;
      skip ("rig serve did not say its port: " ^ line)

let contains s sub =
  let n = String.length sub in
  let rec at i = i + n <= String.length s && (String.sub s i n = sub || at (i + 1)) in
  at 0

let stop pid =
  (try Unix.kill pid Sys.sigterm with Unix.Unix_error _ -> ());
  ignore (Unix.waitpid [] pid)

let () =
  let exe = match Sys.getenv_opt "RIG_EXE" with Some e when Sys.file_exists e -> e | _ -> skip "RIG_EXE is not set to the build's rig" in
  let key = Filename.temp_file "rig-key" "" in
  let oc = open_out key in
  output_string oc "the OCaml binding's test key";
  close_out oc;
  let pid, address = serve exe key in
  at_exit (fun () -> stop pid; Sys.remove key);
  let opener = Rig_edge.remote ~key_file:key address in
  let h =
    match Rig.open_host ~machine:"ml1" opener with
    | Ok h -> h
    | Error why when contains why "librig-driver-remote" -> skip ("no remote driver: " ^ why)
    | Error why ->
        check ("open_host: " ^ why) false;
        finish "test_machine"
  in
  check "the host is CPU@ml1" (Rig.name h = "CPU@ml1");
  check "its machine" (Rig.machine h = Some "ml1" && Rig.machine Rig.host = None);
  check "one host per machine" (Rig.open_host ~machine:"ml1" opener = Ok h);
  check "the opener's name" (opener.Rig_edge.name = "remote:" ^ address);
  (match Rig.open_ opener with Error _ -> check "open_ of a remote opener is Error" true | Ok _ -> check "open_ of a remote opener is Error" false);
  (match Rig.open_host ~machine:"ml2" (Rig_edge.plugin "memory:x") with
  | Error _ -> check "a plugin opens no host" true
  | Ok _ -> check "a plugin opens no host" false);
  raises "a bad machine name" invalid (fun () -> Rig.open_host ~machine:"no such/name" opener);
  raises "a negative hang bound" invalid (fun () ->
      Rig.open_host ~machine:"ml3" (Rig_edge.remote ~hang_ms:(-1) ~key_file:key address));
  (match Rig.open_host ~machine:"ml3" (Rig_edge.remote ~driver:"nosuchdriver" ~key_file:key address) with
  | Error why -> check "a driver of other machines that is absent is Error" (contains why "nosuchdriver")
  | Ok _ -> check "a driver of other machines that is absent is Error" false);
  let d = Result.get_ok (Rig.open_ ~machine:h (Rig_edge.plugin "memory:a")) in
  check "a device of the machine" (Rig.name d = "memory:a@ml1" && Rig.machine d = Some "ml1");
  check "the same device again" (Rig.open_ ~machine:h (Rig_edge.plugin "memory:a") = Ok d);
  let e = Result.get_ok (Rig.open_ ~machine:d (Rig_edge.plugin "memory:b")) in
  check "through any device of the machine" (Rig.name e = "memory:b@ml1");
  check "CPU on the machine is its host" (Rig.open_ ~machine:d (Rig_edge.plugin "CPU") = Ok h);
  check "on this machine's host, this machine" (Rig.open_ ~machine:Rig.host (Rig_edge.plugin "memory:ml-local")
                                                |> Result.map Rig.name = Ok "memory:ml-local");
  check "no device of this process reaches it" (not (Rig.reaches Rig.host d) && not (Rig.reaches d Rig.host));
  (match Rig.open_io ~machine:h (Rig_edge.file "/tmp/x") with
  | Error _ -> check "io of another machine is Error" true
  | Ok _ -> check "io of another machine is Error" false);
  let b = Rig.Buffer.create d 16 in
  Rig.Buffer.blit_from_string "hello, machine!!" 0 b 0 16;
  let c = Rig.Buffer.create e 16 in
  Rig.Buffer.copy ~src:b ~dst:c;
  let out = Bytes.create 16 in
  Rig.Buffer.blit_to_bytes c 0 out 0 16;
  check "bytes there and back" (Bytes.to_string out = "hello, machine!!");
  Rig.close h;
  check "closing the host closes its machine" (Rig.lost d <> None && Rig.lost e <> None);
  check "one host for its life" (Result.is_error (Rig.open_host ~machine:"ml1" opener));
  check "no open on it" (Result.is_error (Rig.open_ ~machine:h (Rig_edge.plugin "memory:c")));
  finish "test_machine"
