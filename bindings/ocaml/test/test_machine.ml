(* Other machines: open_host through Rig_edge.remote, open_ ~machine, and
   a machine's close, against a `rig serve` of the build on a loopback port
   (as tests/remote does). Skips, saying why, where RIG_EXE (the build's
   rig, run-tests.sh sets it) or the remote driver is absent. *)
open Check
open Serve

let () =
  let _, address, key = Serve.start () in
  let opener = Rig_edge.remote ~key_file:key address in
  let h = Serve.open_host ~machine:"ml1" opener in
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
